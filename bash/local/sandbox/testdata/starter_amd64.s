# The starter (starter.go), for GNU as: the test assembles it, where as and
# objcopy are installed, and checks that starterCode holds exactly this.
.intel_syntax noprefix
.globl _start
_start:
    sub rsp, 32
    mov qword ptr [rsp], -1
    mov qword ptr [rsp+8], 0
    mov eax, 14
    xor edi, edi
    mov rsi, rsp
    xor edx, edx
    mov r10d, 8
    syscall
    mov eax, 57
    syscall
    test rax, rax
    jz child
    js fail
    mov r12, rax
wait:
    mov eax, 61
    mov rdi, -1
    lea rsi, [rsp+16]
    xor edx, edx
    xor r10d, r10d
    syscall
    cmp rax, -4
    je wait
    test rax, rax
    js fail
    cmp rax, r12
    jne wait
    mov eax, 1
    mov edi, 5
    lea rsi, [rsp+16]
    mov edx, 4
    syscall
    mov eax, 60
    xor edi, edi
    syscall
fail:
    mov eax, 60
    mov edi, 127
    syscall
child:
    mov eax, 3
    mov edi, 4
    syscall
    mov eax, 3
    mov edi, 5
    syscall
    mov eax, 3
    mov edi, 6
    syscall
    mov eax, 14
    mov edi, 2
    lea rsi, [rsp+8]
    xor edx, edx
    mov r10d, 8
    syscall
    mov rcx, [rsp+32]
    mov rdi, [rsp+48]
    lea rsi, [rsp+48]
    lea rdx, [rsp+rcx*8+48]
    mov eax, 59
    syscall
    mov eax, 60
    mov edi, 127
    syscall
