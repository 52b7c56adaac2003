// Loading hardware profiles from hardware-profiles/<kind>/NAME.yaml or a path,
// strictly: every key known, every number in range, errors as FILE:LINE: KEY.
#pragma once

#include <string>

#include "sim/core/hardware_profile.h"

namespace YAML { class Node; }

namespace trainsim {

// Each loader resolves `ref` (a catalogue name under hardware-profiles/<kind>/
// or a path relative to `from_file`) and parses it strictly. Errors name the
// profile file, or `from_file`/`ref_node` when the reference itself is wrong.
GpuProfile LoadGpuProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
// The file a GPU profile reference names (as LoadGpuProfile resolves it).
std::string ResolveGpuProfilePath(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
NodeProfile LoadNodeProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
FabricProfile LoadFabricProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
FrameworkProfile LoadFrameworkProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
StorageProfile LoadStorageProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);
// hardware-profiles/sites/: PUE, energy price and write-off years of an owned cluster.
SiteProfile LoadSiteProfile(const YAML::Node& ref_node, const std::string& from_file, const std::string& key);

// A list of LoRA target projections (qkv, proj, fc1, fc2) at `path` of `file`: a
// scenario's training.finetune.target_modules or a framework's lora_target_modules.
// Megatron's names (linear_qkv, ...) and Hugging Face PEFT's (q_proj, ...,
// down_proj, all-linear) name the same four; the parts of a fused projection
// (q/k/v, gate/up) only all together. Throws InputException naming the file,
// the line and the path for an empty list, an unknown name, a projection named
// twice or part of a fused one.
LoraTargets ParseLoraTargets(const YAML::Node& list, const std::string& file, const std::string& path);

// A list of Megatron-Core recompute_modules (RecomputeModuleNames()) at `path`
// of `file`, as RecomputeModule bits: a scenario's training.recompute_modules
// or a framework's recompute_modules. Throws InputException naming the file,
// the line and the path for an empty list or an unknown name.
unsigned ParseRecomputeModules(const YAML::Node& list, const std::string& file, const std::string& path);
// A cuda_graph_scope list (CudaGraphModuleNames) as CudaGraphModule bits,
// with Megatron-Core's rules; names the file, line and key otherwise.
unsigned ParseCudaGraphScope(const YAML::Node& list, const std::string& file, const std::string& path);

}  // namespace trainsim
