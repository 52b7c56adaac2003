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

// A model reference as written in a scenario: a YAML mapping (inline keys), a
// catalogue name or a path (.yaml trainsim keys, .json Hugging Face config).
// `scenario_file` anchors relative paths and error messages.
ModelSpec ResolveModel(const YAML::Node& ref, const std::string& scenario_file, const std::string& key);

// The keys of catalogue model `name` (models/catalogue/NAME.yaml) as a
// mapping, so that a --set can change one of them; a null node when the
// catalogue has no model of that name.
YAML::Node CatalogueModelKeys(const std::string& name);

// Loads a model file (trainsim YAML or Hugging Face config.json).
Expected<ModelSpec> LoadModelFile(const std::string& path);

}  // namespace trainsim
