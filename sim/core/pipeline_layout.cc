#include "sim/core/pipeline_layout.h"

#include <algorithm>
#include <cctype>

namespace trainsim {

namespace {

// Unrolled layouts beyond this many characters are refused: a layout lists
// layers, and no model has a million of them (bounds what "t*999999999" costs).
constexpr size_t kMaxUnrolled = 1 << 20;
// Parentheses nest at most this deep: each level is a call, and the input is the user's.
constexpr int kMaxNesting = 64;

bool Fail(std::string* error, const std::string& message) {
  if (error) *error = message;
  return false;
}

// Recursive descent over Megatron's notation; Megatron unrolls with two
// regular expressions (one level of parentheses), this reads nested ones too.
class Unroller {
 public:
  explicit Unroller(const std::string& text) : text_(text) {}

  bool Run(std::string* out, std::string* error) {
    if (!Sequence(out, error)) return false;
    if (pos_ < text_.size()) return Fail(error, "unmatched ')' at character " + std::to_string(pos_ + 1));
    return true;
  }

 private:
  bool Sequence(std::string* out, std::string* error) {
    while (pos_ < text_.size() && text_[pos_] != ')') {
      std::string atom;
      const char c = text_[pos_];
      if (c == ',') {  // cosmetic
        ++pos_;
        continue;
      }
      if (c == '(') {
        if (depth_ >= kMaxNesting) return Fail(error, "parentheses nested more than " + std::to_string(kMaxNesting) + " deep");
        ++pos_;
        ++depth_;
        const bool ok = Sequence(&atom, error);
        --depth_;
        if (!ok) return false;
        if (pos_ >= text_.size()) return Fail(error, "unclosed '('");
        ++pos_;  // ')'
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        atom = std::string(1, c);
        ++pos_;
      } else {
        return Fail(error, std::string("invalid character '") + c + "' at character " + std::to_string(pos_ + 1) +
                               " (known: E embedding, t transformer layer, m MTP module, L loss, | between stages, x*n and (...)*n repeat)");
      }
      size_t times = 1;
      if (pos_ < text_.size() && text_[pos_] == '*') {
        ++pos_;
        const size_t start = pos_;
        size_t n = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          n = n * 10 + size_t(text_[pos_] - '0');
          if (n > kMaxUnrolled) return Fail(error, "a repeat count above " + std::to_string(kMaxUnrolled));
          ++pos_;
        }
        if (pos_ == start) return Fail(error, "'*' without a count at character " + std::to_string(start));
        times = n;
      }
      if (!atom.empty() && times > (kMaxUnrolled - out->size()) / atom.size()) {
        return Fail(error, "unrolls to more than " + std::to_string(kMaxUnrolled) + " characters");
      }
      for (size_t i = 0; i < times; ++i) *out += atom;
    }
    return true;
  }

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<PipelineLayout> PipelineLayout::Parse(const std::string& text, std::string* error) {
  std::string flat;
  if (!Unroller(text).Run(&flat, error)) return std::nullopt;
  PipelineLayout layout;
  layout.stages_.emplace_back();
  for (char c : flat) {
    if (c == '|') {
      layout.stages_.emplace_back();
    } else {
      layout.stages_.back() += c;
    }
  }
  const std::string& first = layout.stages_.front();
  const std::string& last = layout.stages_.back();
  const auto count = [&flat](char c) { return std::count(flat.begin(), flat.end(), c); };
  if (first.empty() || first.front() != 'E' || count('E') != 1) {
    Fail(error, "the embedding (E) must open the first stage, once");
    return std::nullopt;
  }
  if (last.empty() || last.back() != 'L' || count('L') != 1) {
    Fail(error, "the loss (L) must close the last stage, once");
    return std::nullopt;
  }
  const size_t first_mtp = flat.find('m');
  if (first_mtp != std::string::npos) {
    if (flat.find('t', first_mtp) != std::string::npos) {
      Fail(error, "the MTP modules (m) must follow every transformer layer (t)");
      return std::nullopt;
    }
    if (std::count(last.begin(), last.end(), 'm') != count('m')) {
      Fail(error, "the MTP modules (m) must be in the last stage, with the loss");
      return std::nullopt;
    }
  }
  return layout;
}

int PipelineLayout::StageLayers(int vs) const {
  const std::string& s = stages_[size_t(vs)];
  return int(std::count(s.begin(), s.end(), 't'));
}

int PipelineLayout::layers() const {
  int n = 0;
  for (int vs = 0; vs < stages(); ++vs) n += StageLayers(vs);
  return n;
}

int PipelineLayout::mtp_modules() const {
  const std::string& last = stages_.back();
  return int(std::count(last.begin(), last.end(), 'm'));
}

bool PipelineLayout::Check(int layers, int mtp, int pipeline, int virtual_stages, std::string* error) const {
  const auto str = [](long v) { return std::to_string(v); };
  if (long(stages()) != long(pipeline) * virtual_stages) {
    if (pipeline > 0 && stages() % pipeline == 0) {
      return Fail(error, "its " + str(stages()) + " stages over pipeline " + str(pipeline) + " need virtual_stages " + str(stages() / pipeline) +
                             ", not " + str(virtual_stages));
    }
    return Fail(error, "its " + str(stages()) + " stages are not pipeline x virtual_stages = " + str(long(pipeline) * virtual_stages));
  }
  if (this->layers() != layers) return Fail(error, "it places " + str(this->layers()) + " transformer layers (t); the model has " + str(layers));
  if (mtp_modules() != std::max(0, mtp)) {
    return Fail(error, "it places " + str(mtp_modules()) + " MTP modules (m); the model has " + str(std::max(0, mtp)) + " (model.mtp_layers; unset, the framework's mtp_layers)");
  }
  return true;
}

PipelineLayout PipelineLayout::WithMtpModules(int mtp) const {
  PipelineLayout out = *this;
  std::string& last = out.stages_.back();
  last.erase(std::remove(last.begin(), last.end(), 'm'), last.end());
  last.insert(last.size() - 1, size_t(std::max(0, mtp)), 'm');  // before the loss, which closes the stage
  return out;
}

std::string PipelineLayout::Unrolled() const {
  std::string out;
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (i) out += '|';
    out += stages_[i];
  }
  return out;
}

}  // namespace trainsim
