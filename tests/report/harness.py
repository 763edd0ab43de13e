"""What the report tests share: whether tools/report can plot, and a runner in which each test's
failure, or crash, is its own and the scratch folder is removed however the run ends."""
import os
import shutil
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"  # where tools/report looks for Debian's matplotlib


def matplotlib_importable():
    """What tools/report can use: this interpreter's matplotlib or the system one's."""
    for python in dict.fromkeys([sys.executable, SYSTEM_PYTHON]):
        if os.access(python, os.X_OK) and subprocess.run(
                [python, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return True
    return False


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
