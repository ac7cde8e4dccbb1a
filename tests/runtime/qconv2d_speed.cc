// Prints the single-core speed of the CPU qconv2d kernel (GMAC/s, minimum time of 5 runs) on
// ResNet-18-like layers. Not a test (timing is machine-dependent); built as
// tessel_qconv2d_speed for reports:  ./tessel_qconv2d_speed
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "runtime/cpu/kernels.h"

using tessel::runtime::QConv2dParams;

int main() {
  struct Layer {
    const char* name;
    int64_t ic, hw, oc, k, s, pad, groups;
  };
  const Layer layers[] = {
      {"conv1 7x7/2 3->64 224", 3, 224, 64, 7, 2, 3, 1},
      {"3x3 64->64 56", 64, 56, 64, 3, 1, 1, 1},
      {"3x3/2 64->128 56", 64, 56, 128, 3, 2, 1, 1},
      {"1x1/2 64->128 56", 64, 56, 128, 1, 2, 0, 1},
      {"3x3 128->128 28", 128, 28, 128, 3, 1, 1, 1},
      {"3x3 256->256 14", 256, 14, 256, 3, 1, 1, 1},
      {"3x3 512->512 7", 512, 7, 512, 3, 1, 1, 1},
      {"dw3x3 256 14", 256, 14, 256, 3, 1, 1, 256},
  };
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> i8(-128, 127);
  int64_t total_macs = 0;
  double total_s = 0;
  for (const Layer& l : layers) {
    QConv2dParams p;
    p.ic = l.ic;
    p.ih = p.iw = l.hw;
    p.oc = l.oc;
    p.kh = p.kw = l.k;
    p.stride_h = p.stride_w = l.s;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = l.pad;
    p.groups = l.groups;
    p.in_zero_point = 3;
    p.rq.shift = {9};
    std::vector<int8_t> x(static_cast<size_t>(p.ic * p.ih * p.iw)),
        w(static_cast<size_t>(p.oc * (p.ic / p.groups) * p.kh * p.kw)),
        y(static_cast<size_t>(p.oc * p.oh() * p.ow()));
    std::vector<int32_t> b(static_cast<size_t>(p.oc), 100);
    for (auto& v : x) v = static_cast<int8_t>(i8(rng));
    for (auto& v : w) v = static_cast<int8_t>(i8(rng));
    std::vector<int16_t> pad;
    std::vector<int32_t> acc;
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      tessel::runtime::cpu::qconv2d(p, x.data(), w.data(), b.data(), y.data(), pad, acc);
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    fmt::print("{:<26} {:>10} MACs {:>9.3f} ms {:>7.2f} GMAC/s\n", l.name, p.macs(), best * 1e3,
               static_cast<double>(p.macs()) / best * 1e-9);
    total_macs += p.macs();
    total_s += best;
  }
  fmt::print("{:<26} {:>10} MACs {:>9.3f} ms {:>7.2f} GMAC/s\n", "all", total_macs, total_s * 1e3,
             static_cast<double>(total_macs) / total_s * 1e-9);
  return 0;
}
