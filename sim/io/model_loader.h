// Loading a model architecture: the catalogue (models/catalogue/NAME.yaml),
// a trainsim YAML file, a Hugging Face config.json, or keys inline in a
// scenario; all four go through one parser.
#pragma once

#include <string>

#include "sim/core/error.h"
#include "sim/core/model_spec.h"

namespace YAML { class Node; }

namespace trainsim {

class YamlMap;

// Parses the trainsim model keys from a mapping (inline or a file); throws
// InputException naming `m.file()` and the line.
ModelSpec ParseModelKeys(YamlMap& m, const std::string& default_name);

// The keys of catalogue model `name` (models/catalogue/NAME.yaml) as a
// mapping, so that a --set can change one of them; a null node when the
// catalogue has no model of that name.
YAML::Node CatalogueModelKeys(const std::string& name);

// A model reference as written in a scenario: a YAML mapping (inline keys), a
// catalogue name or a path (.yaml trainsim keys, .json Hugging Face config),
// or a mapping {file: PATH, accept_unknown_keys: [KEY, ...]} naming the
// config.json keys trainsim does not model that the user takes, on purpose, as
// changing nothing (any other such key is exit 2, naming it and its line).
// `scenario_file` anchors relative paths and error messages.
ModelSpec ResolveModel(const YAML::Node& ref, const std::string& scenario_file, const std::string& key);

// Loads a model file (trainsim YAML or Hugging Face config.json); a
// config.json key trainsim does not model is an error.
Expected<ModelSpec> LoadModelFile(const std::string& path);

// The one-line warning a model read from a file deserves: the config.json
// keys a scenario accepted unread (ModelSpec::accepted_unknown_keys) and what
// of the checkpoint is not simulated (ModelSpec::left_out); "" when neither.
std::string ModelFileWarning(const ModelSpec& m);

}  // namespace trainsim
