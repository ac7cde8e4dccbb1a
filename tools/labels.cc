#include "tools/labels.h"

#include "support/error.h"
#include "support/file_read.h"
#include "support/npy.h"
#include "support/text.h"

namespace tessel::tools {

std::vector<std::string> read_labels(const std::string& path) {
  const std::vector<uint8_t> bytes = support::read_file_bounded(path, support::kMaxTextFileBytes, "a label file");
  std::vector<std::string> labels;
  std::string line;
  for (uint8_t b : bytes) {
    if (b == '\n') {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      labels.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(b));
    }
  }
  if (!line.empty()) {
    if (line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  if (labels.empty()) throw_user_error("label file {} is empty", support::quote(path));
  // Labels go into the text and JSON reports, which hold UTF-8 text only: checked here, before
  // anything runs, not when the report is written.
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!support::is_utf8(labels[i])) {
      throw_user_error("label file {} line {} holds {}, which is not UTF-8 text", support::quote(path), i + 1,
                       support::quote(labels[i]));
    }
  }
  return labels;
}

const std::vector<std::string>& cifar10_labels() {
  static const std::vector<std::string> k{"airplane", "automobile", "bird",  "cat",  "deer",
                                          "dog",      "frog",       "horse", "ship", "truck"};
  return k;
}

const std::vector<std::string>& kws12_labels() {
  static const std::vector<std::string> k{"down", "go",    "left", "no",  "off",     "on",
                                          "right", "stop", "up",   "yes", "silence", "unknown"};
  return k;
}

std::vector<std::string> default_labels(int64_t num_classes, const std::vector<int64_t>& input_shape,
                                        const std::vector<std::string>& imagenet_files) {
  const bool four_d = input_shape.size() == 4;
  if (num_classes == 1000) {
    for (const std::string& f : imagenet_files) {
      try {
        std::vector<std::string> labels = read_labels(f);
        if (labels.size() == 1000) return labels;
      } catch (const Error&) {
      }
    }
    return {};
  }
  if (num_classes == 10 && four_d && input_shape[1] == 1 && input_shape[2] == 28 &&
      input_shape[3] == 28) {
    std::vector<std::string> digits;
    for (int d = 0; d < 10; ++d) digits.push_back(std::to_string(d));
    return digits;
  }
  if (num_classes == 10 && four_d && input_shape[1] == 3 && input_shape[2] == 32 &&
      input_shape[3] == 32) {
    return cifar10_labels();
  }
  if (num_classes == 12) return kws12_labels();
  return {};
}

}  // namespace tessel::tools
