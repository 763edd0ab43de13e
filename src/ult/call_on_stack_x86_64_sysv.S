// locus_call_on_stack for x86-64 System V (ELF): calls fn(arg, caller) on another stack, where
// `caller` is a Boost.Context fcontext of the calling frame, built in place by saving exactly
// what Boost's jump_fcontext saves, in its layout (boost/context, jump_x86_64_sysv_elf_gas.S):
//   0x00 MXCSR  0x04 x87 control word  0x08 r12  0x10 r13  0x18 r14  0x20 r15  0x28 rbx
//   0x30 rbp    0x38 return address
// A thief that jump_fcontext()s to `caller` therefore resumes the caller as if this function had
// returned the transfer_t {context that jumped, data}. If fn returns instead (nobody took the
// caller), we come back by a plain ret: {0, 0}. Call and ret stay paired, so the return-stack
// predictor stays in step; the switch pair it replaces mispredicted about four returns per spawn.
//
// transfer_t locus_call_on_stack(void* arg, void* stack_top, void (*fn)(void*, fcontext_t))
    .text
    .globl  locus_call_on_stack
    .type   locus_call_on_stack, @function
    .p2align 6
locus_call_on_stack:
    .cfi_startproc
    leaq    -0x38(%rsp), %rsp
    .cfi_adjust_cfa_offset 0x38
    stmxcsr (%rsp)
    fnstcw  0x4(%rsp)
    movq    %r12, 0x8(%rsp)
    movq    %r13, 0x10(%rsp)
    movq    %r14, 0x18(%rsp)
    movq    %r15, 0x20(%rsp)
    movq    %rbx, 0x28(%rsp)
    .cfi_offset %rbx, -0x18
    movq    %rbp, 0x30(%rsp)
    // rbx is callee-saved, so it still holds the frame when fn returns.
    movq    %rsp, %rbx
    .cfi_def_cfa_register %rbx
    movq    %rsi, %rsp
    movq    %rbx, %rsi
    call    *%rdx
    movq    %rbx, %rsp
    .cfi_def_cfa_register %rsp
    // fn preserved r12-r15 and rbp itself; only rbx was ours.
    movq    0x28(%rsp), %rbx
    .cfi_restore %rbx
    leaq    0x38(%rsp), %rsp
    .cfi_adjust_cfa_offset -0x38
    xorl    %eax, %eax
    xorl    %edx, %edx
    ret
    .cfi_endproc
    .size   locus_call_on_stack, .-locus_call_on_stack

    .section .note.GNU-stack, "", %progbits
