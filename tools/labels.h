// Class labels for the top-5 listing of `tessel run`: a user file, or built-in defaults chosen
// from the number of classes and the input shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::tools {

/// Reads a label file: one label per line, line i = class i; a trailing newline is optional and
/// a trailing '\r' on a line is dropped. Throws IoError if the file cannot be read and UserError
/// if it holds no labels.
std::vector<std::string> read_labels(const std::string& path);

/// The ten CIFAR-10 class names (airplane ... truck), the order of MLPerf Tiny ic01.
const std::vector<std::string>& cifar10_labels();
/// The twelve MLPerf Tiny kws01 keywords in output order: down, go, left, no, off, on, right,
/// stop, up, yes, silence, unknown.
const std::vector<std::string>& kws12_labels();

/// Built-in labels for a classifier with `num_classes` outputs whose first graph input has shape
/// `input_shape`:
///   1000 classes -> the first of `imagenet_files` that can be read (ImageNet names),
///   10 classes and input [N,1,28,28] -> the digits "0".."9" (MNIST),
///   10 classes and input [N,3,32,32] -> cifar10_labels(),
///   12 classes -> kws12_labels().
/// Returns an empty vector when none applies (callers then print class indices only).
/// Never throws for unreadable candidates; a candidate whose line count differs from 1000 is
/// skipped.
std::vector<std::string> default_labels(int64_t num_classes, const std::vector<int64_t>& input_shape,
                                        const std::vector<std::string>& imagenet_files);

}  // namespace tessel::tools
