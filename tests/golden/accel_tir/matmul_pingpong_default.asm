.uop 0 0 0
.uop 0 0 0
.uop 0 1 1
.uop 0 2 2
.uop 0 3 3
.uop 16 0 0
.uop 16 32 8
.uop 16 33 9
.uop 16 34 10
.uop 16 35 11
.uop 16 16 0
LOAD UOP sram=0 dram=3072 y=1 x=11 stride=11
LOAD INP sram=0 dram=0 y=1 x=32 stride=32
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
LOAD INP sram=32 dram=0 y=1 x=32 stride=32
LOAD WGT sram=8 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
GEMM uop=5:6 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev
GEMM uop=6:10 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
STORE OUT sram=0 dram=512 y=8 x=2 stride=4 deps=pop_prev|push_prev
STORE OUT sram=16 dram=514 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=32 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
LOAD INP sram=32 dram=32 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=8 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
GEMM uop=5:6 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=6:10 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
STORE OUT sram=0 dram=544 y=8 x=2 stride=4 deps=pop_prev|push_prev
STORE OUT sram=16 dram=546 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=64 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
LOAD INP sram=32 dram=64 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=8 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
GEMM uop=5:6 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=6:10 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_prev|push_next
STORE OUT sram=0 dram=576 y=8 x=2 stride=4 deps=pop_prev|push_prev
STORE OUT sram=16 dram=578 y=8 x=2 stride=4 deps=pop_prev|push_prev
LOAD INP sram=0 dram=96 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=0 dram=16 y=1 x=8 stride=8 deps=push_next
LOAD INP sram=32 dram=96 y=1 x=32 stride=32 deps=pop_next
LOAD WGT sram=8 dram=24 y=1 x=8 stride=8 deps=push_next
GEMM uop=0:1 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=1:5 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=0:1 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
GEMM uop=5:6 iter=8,2 dst=2,1 src=0,0 wgt=0,0 reset deps=pop_prev|pop_next
GEMM uop=6:10 iter=8,2 dst=2,1 src=4,0 wgt=0,4
ALU ADD uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=256
ALU SHR uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=9
ALU MAX uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=-128
ALU MIN uop=10:11 iter=8,2 dst=2,1 src=2,1 imm=127 deps=push_next
STORE OUT sram=0 dram=608 y=8 x=2 stride=4 deps=pop_prev
STORE OUT sram=16 dram=610 y=8 x=2 stride=4 deps=pop_prev
FINISH
