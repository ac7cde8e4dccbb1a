.uop 0 0 0
.uop 0 0 0
.uop 0 1 1
.uop 0 2 2
.uop 0 3 3
LOAD UOP sram=0 dram=3072 y=1 x=5 stride=5
LOAD INP sram=0 dram=0 y=1 x=32 stride=32
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=512 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=0 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=514 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=32 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=544 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=32 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=546 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=64 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=576 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=64 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=578 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=96 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev|push_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=608 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=96 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4 deps=pop_prev
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=610 y=8 x=2 stride=4 deps=pop_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
