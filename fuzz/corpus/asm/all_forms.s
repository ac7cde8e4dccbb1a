# every statement form of isa/asm.h
.name all_forms
.uop 0 0 0
.uop 1 2 3
LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
LOAD INP sram=0 dram=0 y=2 x=2 stride=2 pad=1,1,1,1 deps=pop_next
LOAD WGT sram=0 dram=0 y=1 x=1 stride=1 deps=push_next
LOAD ACC sram=0 dram=0 y=1 x=1 stride=1
LOAD ACC_8BIT sram=0 dram=0 y=1 x=1 stride=1
GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset deps=pop_prev|push_next
ALU ADD uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=-3
ALU SHR uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=2 use_imm=0
ALU MIN uop=0:1 iter=2,1 dst=1,0 src=1,0 imm=127
ALU MAX uop=0:1 iter=1,2 dst=0,1 src=0,1 imm=-128
ALU MUL uop=0:1 iter=1,1 dst=0,0 src=0,0 deps=push_prev
STORE OUT sram=0 dram=0 y=1 x=1 stride=1 deps=pop_prev|push_prev
FINISH deps=pop_next
