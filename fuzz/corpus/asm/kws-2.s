# program 'CONV_2D__58', config 1x16_i8w8a32_15_15_18_17, 45 instructions, 28 uops
.name CONV_2D__58
.config {"LOG_INP_WIDTH":3,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK_IN":4,"LOG_BLOCK_OUT":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17,"LOG_BUS_WIDTH":6,"CLOCK_MHZ":100.0,"DRAM_LATENCY":32,"CMD_QUEUE_DEPTH":512,"TOKEN_QUEUE_DEPTH":1024}
.uop 0 0 0
.uop 0 0 0
.uop 0 75 1
.uop 75 0 2
.uop 75 75 3
.uop 150 0 4
.uop 150 75 5
.uop 225 0 6
.uop 225 75 7
.uop 0 304 0
.uop 0 300 0
.uop 0 301 0
.uop 0 302 0
.uop 0 303 0
.uop 1024 0 0
.uop 1024 1024 512
.uop 1024 1074 513
.uop 1099 1024 514
.uop 1099 1074 515
.uop 1174 1024 516
.uop 1174 1074 517
.uop 1249 1024 518
.uop 1249 1074 519
.uop 1024 1328 0
.uop 1024 1324 0
.uop 1024 1325 0
.uop 1024 1326 0
.uop 1024 1327 0
LOAD UOP sram=0 dram=6144 y=1 x=28 stride=28
LOAD INP sram=0 dram=0 y=25 x=3 stride=5
LOAD INP sram=75 dram=125 y=25 x=3 stride=5
LOAD WGT sram=0 dram=64 y=4 x=2 stride=4 deps=push_next
LOAD INP sram=1024 dram=3 y=25 x=2 stride=5
LOAD INP sram=1074 dram=128 y=25 x=2 stride=5
LOAD WGT sram=512 dram=64 y=4 x=2 stride=4 deps=push_next
LOAD ACC sram=300 dram=320 y=1 x=20 stride=20
GEMM uop=0:1 iter=4,75 dst=75,1 src=0,0 wgt=0,0 reset
GEMM uop=1:9 iter=25,3 dst=3,1 src=3,1 wgt=0,0 deps=pop_prev|push_prev
LOAD ACC sram=1324 dram=320 y=1 x=20 stride=20
GEMM uop=14:15 iter=4,50 dst=75,1 src=0,0 wgt=0,0 reset
GEMM uop=15:23 iter=25,2 dst=2,1 src=2,1 wgt=0,0 deps=pop_prev|push_prev
LOAD INP sram=0 dram=250 y=25 x=3 stride=5 deps=pop_next
LOAD INP sram=75 dram=375 y=25 x=3 stride=5
LOAD WGT sram=0 dram=66 y=4 x=2 stride=4 deps=push_next
LOAD INP sram=1024 dram=253 y=25 x=2 stride=5 deps=pop_next
LOAD INP sram=1074 dram=378 y=25 x=2 stride=5
LOAD WGT sram=512 dram=66 y=4 x=2 stride=4 deps=push_next
GEMM uop=1:9 iter=25,3 dst=3,1 src=3,1 wgt=0,0 deps=pop_prev
GEMM uop=15:23 iter=25,2 dst=2,1 src=2,1 wgt=0,0 deps=pop_prev
ALU ADD uop=9:10 iter=4,75 dst=75,1 src=5,0
ALU MAX uop=10:11 iter=4,75 dst=75,1 src=5,0
ALU MIN uop=11:12 iter=4,75 dst=75,1 src=5,0
ALU MUL uop=12:13 iter=4,75 dst=75,1 src=5,0
ALU ADD uop=13:14 iter=4,75 dst=75,1 src=5,0
ALU SHR uop=0:1 iter=4,75 dst=75,1 src=0,0 imm=24 deps=push_next
ALU ADD uop=23:24 iter=4,50 dst=75,1 src=5,0
ALU MAX uop=24:25 iter=4,50 dst=75,1 src=5,0
ALU MIN uop=25:26 iter=4,50 dst=75,1 src=5,0
ALU MUL uop=26:27 iter=4,50 dst=75,1 src=5,0
ALU ADD uop=27:28 iter=4,50 dst=75,1 src=5,0
ALU SHR uop=14:15 iter=4,50 dst=75,1 src=0,0 imm=24 deps=push_next
STORE OUT sram=0 dram=512 y=25 x=3 stride=5 deps=pop_prev
STORE OUT sram=75 dram=637 y=25 x=3 stride=5
STORE OUT sram=150 dram=762 y=25 x=3 stride=5
STORE OUT sram=225 dram=887 y=25 x=3 stride=5
STORE OUT sram=1024 dram=515 y=25 x=2 stride=5 deps=pop_prev
STORE OUT sram=1099 dram=640 y=25 x=2 stride=5
STORE OUT sram=1174 dram=765 y=25 x=2 stride=5
STORE OUT sram=1249 dram=890 y=25 x=2 stride=5
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
