"""Runs a report test file's test functions: each one's failure, or crash, is its own; the
scratch folder is removed however the run ends. Exit status 1 when any test failed."""
import shutil


def run_tests(tests, scratch):
    passed = failed = 0
    try:
        for test in tests:
            try:
                test()
            except Exception as e:  # a crash in a test is that test's failure, not the run's
                failed += 1
                print(f"FAIL {test.__name__}: {type(e).__name__}: {e}")
            else:
                passed += 1
                print(f"ok   {test.__name__}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
