// A sweep file (design.md §3): a base scenario (a path relative to the sweep
// file, or inline) plus axes. `axes` form a product; `zip` groups advance
// together (one group, or a list of groups); `filter` expressions drop points
// before they run. Every point is the base YAML parsed afresh with the
// point's values applied as overrides, so a point that does not parse keeps
// the one-line `FILE:LINE: KEY: what` message (an axis value's error names
// the axis line of the sweep file). Bad sweep files fail with the same
// one-line errors as scenarios.
//
//   base: ../llama2-70b.yaml
//   axes:
//     cluster.nodes: [1, 2, 4, 8, 16]
//     parallelism.tensor: {from: 1, to: 8, factor: 2}   # 1 2 4 8 ({from, to, step}: arithmetic)
//   zip:
//     training.global_batch: [128, 256]
//     training.steps: [500, 250]
//   filter:
//     - parallelism.tensor * parallelism.pipeline <= cluster.nodes * 8
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace trainsim {

// One swept key and its values, in file order.
struct SweepAxis {
  std::string key;                  // dotted scenario key, e.g. "cluster.nodes"
  std::vector<std::string> values;  // display text: a scalar as written, a list/map in YAML flow style
  std::vector<std::string> yaml;    // the same values as YAML text for the override
  int line = 0;                     // line of the key in the sweep file
  int zip_group = -1;               // -1: a product axis; else the zip group it advances with
};

// A point of the sweep: its position and its place in the grid of the axes'
// values (SweepSpec::ValueIndex reads each axis's value from it). 16 bytes:
// a sweep of 10 million points holds them all.
struct SweepPoint {
  size_t index = 0;  // position in the enumeration (before resume)
  size_t grid = 0;   // mixed-radix number of the value indices, the last dimension fastest
};

class SweepFilter;  // a parsed `filter` expression (sweep_spec.cc)
struct SweepParsed;  // the base document and axis values parsed once, shared profiles (sweep_spec.cc)

// A parsed sweep file. Immutable after loading; PointScenario is thread-safe.
struct SweepSpec {
  std::string file;       // the sweep file
  std::string base_file;  // the file the base scenario is in (the sweep file when inline)
  std::string base_text;  // that file's text, parsed afresh for every point
  bool base_inline = false;
  std::vector<SweepAxis> axes;  // product axes in file order, then the zip groups' keys
  std::vector<std::shared_ptr<const SweepFilter>> filters;
  std::vector<SweepPoint> points;  // product order (first axis outermost), filtered
  size_t filtered_out = 0;          // points of the product the filters removed
  // What the rows depend on, as text (for the results file's fingerprint):
  // the base scenario (its file's text, or the inline mapping re-emitted) and
  // the axes, zip groups and filters (one line each, values in order).
  std::string base_definition;
  std::string axes_definition;
  // The files the base and each axis value read beyond the sweep and base
  // files and the bundled data (a model YAML or config.json, a profile given
  // by path, the GPU profile it names), sorted: their contents are part of
  // the fingerprint.
  std::vector<std::string> input_files;
  // Set by ParseSweepSpec: what every point would otherwise parse again (the
  // base YAML, each axis value, the profiles and models it names). A point is
  // then a copy of the parsed base with its values set, parsed by the same
  // loader; without it (a hand-built spec) each point parses base_text.
  std::shared_ptr<const SweepParsed> parsed;
  // What the user should know before the rows (the base's and each axis
  // value's warnings, once each): config.json keys accepted unread.
  std::vector<std::string> warnings;

  // Per axis: the place value of its dimension in SweepPoint::grid and the
  // dimension's size (a zip group's axes share one dimension).
  std::vector<size_t> axis_stride, axis_radix;
  // Which of axes[axis].values the point takes.
  size_t ValueIndex(const SweepPoint& p, size_t axis) const { return (p.grid / axis_stride[axis]) % axis_radix[axis]; }
  // Column keys: the axis keys in `axes` order.
  std::vector<std::string> Keys() const;
  // Display values of a point, one per axis.
  std::vector<std::string> Values(const SweepPoint& p) const;
  // A string identifying the point's settings (for resume), from display values.
  static std::string PointId(const std::vector<std::string>& values);
  // The point's scenario. Its name is the base name plus the point's settings.
  Expected<Scenario> PointScenario(const SweepPoint& p) const;
};

// Reads and checks a sweep file. Never throws.
Expected<SweepSpec> LoadSweepSpec(const std::string& file);

// As LoadSweepSpec, from text; `file` names it in errors and anchors the base path.
Expected<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& file);

}  // namespace trainsim
