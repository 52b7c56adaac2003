// trainsim validate [--reference FILE.yaml] [--profile PROFILE.yaml] [--json] [--fidelity des|analytical]
//                   [--set KEY=VALUE]... [--cases TEXT]
#include <algorithm>
#include <iostream>

#include "calib/layer_prediction.h"
#include "sim/cli/args.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress.h"
#include "sim/io/json_writer.h"
#include "sim/validate/validation.h"

namespace trainsim::cli {

int ValidateCommand(const Args& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a;
  const std::string perr =
      Parse(args, {{"--reference", true}, {"--profile", true}, {"--json"}, {"--fidelity", true}, {"--progress"}, {"--set", true},
                   {"--cases", true}, {"--help", false, "-h"}}, a);
  if (a.Has("--help")) {
    out << "usage: trainsim validate [--reference FILE.yaml | --profile PROFILE.yaml] [--json] [--fidelity des|analytical]\n"
           "                         [--set KEY=VALUE]... [--cases TEXT]\n"
           "Predict every case of a reference file of measured runs and print predicted vs measured step time.\n"
           "A case that names no training.framework runs with the framework profile whose containers (else result repositories) its source names.\n"
           "Where a case's note lists other releases' runs of its configuration (\"same config (tokens/s/GPU): 26.04: 5810, ...\"),\n"
           "the table ends with how far those runs spread and where the predictions fall among them; errors stay against each case's own run.\n"
           "  --reference FILE   cases to predict (default: reference/measured.yaml in the data directory when\n"
           "                     installed, else tests/reference/measured.yaml in the source tree)\n"
           "  --profile FILE     a calibration profile: validate its measured layer steps instead\n"
           "  --json             machine-readable output\n"
           "  --fidelity F       analytical (default) or des\n"
           "  --progress         progress and time left on stderr (default: only when stderr is a terminal)\n"
           "  --set KEY=VALUE    what-if: the same override in every case's scenario (repeatable), e.g.\n"
           "                     --set parallelism.moe_dispatcher=deepep\n"
           "  --cases TEXT       only the cases whose id contains TEXT\n"
           "exit status: 0 ok, 1 no case could be predicted (e.g. an override no case's hardware runs: nvfp4 on H100),\n"
           "2 bad input (in the file, an option, or a case's scenario)\n";
    return kExitOk;
  }
  if (!perr.empty() || !a.positional.empty()) {
    err << "trainsim validate: " << (perr.empty() ? "unexpected argument '" + a.positional[0] + "'" : perr) << "\n";
    return kExitBadInput;
  }
  if (a.Has("--profile") && a.Has("--reference")) {
    err << "trainsim validate: --profile and --reference are alternatives (a profile's own measurements, or a file of published runs); give one\n";
    return kExitBadInput;
  }
  if (auto profile = a.Value("--profile")) {
    // A calibrated profile: predict the layer steps its calibration measured.
    // Its cases are layer steps on the calibrated machine, not scenarios: the
    // what-ifs and the fidelity of a reference file's cases do not apply.
    for (const char* flag : {"--cases", "--set", "--fidelity"}) {
      if (a.Has(flag)) {
        err << "trainsim validate: " << flag << " applies to --reference cases, not to a profile's measured layer steps\n";
        return kExitBadInput;
      }
    }
    auto rep = calib::ValidateProfile(*profile);
    if (!rep) {
      err << rep.error().ToString() << "\n";
      return kExitBadInput;
    }
    out << (a.Has("--json") ? ValidationJson(*rep) : calib::LayerValidationTable(*rep));
    return kExitOk;
  }
  Fidelity fid = Fidelity::kAnalytical;
  if (const std::string ferr = FidelityFlag(a, &fid); !ferr.empty()) {
    err << "trainsim validate: " << ferr << "\n";
    return kExitBadInput;
  }
  const std::string file = a.Value("--reference").value_or(DefaultReferenceFile());
  ProgressLine progress(err, "validate", a.Has("--progress"));
  ValidationWhatIf what_if{a.All("--set"), a.Value("--cases").value_or(""), {}};
  auto rep = ValidateReference(
      file, fid,
      [&progress](int done, int total, const std::string& id) {
        progress.Update(double(done) / total, "case " + std::to_string(done) + " of " + std::to_string(total) + ": " + id);
      },
      what_if);
  progress.Finish();
  // A script reading --json still gets one document, as plan and size print theirs.
  const auto fail = [&](ErrorKind kind, const std::string& text) {
    err << text << "\n";
    if (a.Has("--json")) {
      out << "{\"cases\": [], \"error_kind\": " << JsonWriter::Quote(ToString(kind)) << ", \"error\": " << JsonWriter::Quote(text) << "}\n";
    }
    return ExitStatus(kind);
  };
  // Bad input is 2; an override no case's hardware can do (nvfp4 on A100 and H100) is 1, as run says it.
  if (!rep) return fail(rep.error().kind, rep.error().ToString());
  if (rep->cases.empty() && !what_if.cases_containing.empty()) {
    return fail(ErrorKind::kBadInput, "trainsim validate: --cases: no case id in " + file + " contains '" + what_if.cases_containing + "'");
  }
  out << (a.Has("--json") ? ValidationJson(*rep) : ValidationTable(*rep));
  // A case whose scenario is malformed (a misspelt key, an unknown model) is
  // the file's error, as one outside a scenario is: a gate over the file
  // must not pass on the cases left.
  const long bad = std::count_if(rep->cases.begin(), rep->cases.end(), [](const ValidationCase& c) {
    return !c.failure.empty() && c.failure_kind == ErrorKind::kBadInput;
  });
  if (bad > 0) {
    err << "trainsim validate: " << bad << (bad == 1 ? " case" : " cases") << " of " << file
        << (bad == 1 ? " has" : " have") << " bad input in its scenario (each says why above); the figures are over the others\n";
    return kExitBadInput;
  }
  // Not one prediction: a mean over nothing is not a result a script may read as one.
  if (rep->predicted == 0) {
    err << "trainsim validate: no case of " << file << " could be predicted (each says why above)\n";
    return kExitSimulationFailed;
  }
  return kExitOk;
}

}  // namespace trainsim::cli
