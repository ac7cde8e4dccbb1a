# One 16x16 GEMM tile on the default config (1x16_i8w8a32): out[o] = sum_k wgt[o][k] * inp[k],
# int8 x int8 accumulated in int32 ACC; OUT holds the low 8 bits. Run with
#   tessel sim gemm_tile.s --segment inp=gemm_tile_inp.bin --segment wgt=gemm_tile_wgt.bin --alloc out=16
# Image layout (4096-byte segments in command-line order): uop @0, inp @4096, wgt @8192, out @12288,
# so the DRAM element indices are inp 4096/16 = 256, wgt 8192/256 = 32, out 12288/16 = 768.
.uop 0 0 0
LOAD INP sram=0 dram=256 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next        # tell compute: inputs are in
LOAD UOP sram=0 dram=0 y=1 x=1 stride=1
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset             # ACC[0] = 0
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_next
STORE OUT sram=0 dram=768 y=1 x=1 stride=1 deps=pop_prev|push_prev
FINISH deps=pop_next                                             # wait for the store to drain
