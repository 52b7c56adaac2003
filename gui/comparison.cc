#include "gui/comparison.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/result_writer.h"

#include <yaml-cpp/yaml.h>

#include <QBrush>
#include <QColor>
#include <QFile>
#include <QFont>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>
#include <cmath>

namespace trainsim::gui {

QString Configuration::Name() const {
  try {
    const YAML::Node root = YAML::Load(yaml.toStdString());
    if (root.IsMap() && root["name"] && root["name"].IsScalar()) return QString::fromStdString(root["name"].Scalar());
  } catch (const YAML::Exception&) {
    // fall through: an unparsable document still needs a label
  }
  if (!file.isEmpty()) return QFileInfo(file).completeBaseName();
  return QStringLiteral("untitled");
}

QString Configuration::MessageFile() const { return file.isEmpty() ? QStringLiteral("untitled.yaml") : file; }

Expected<Scenario> ParseConfiguration(const Configuration& c, const std::vector<std::string>& overrides) {
  const std::string file = c.MessageFile().toStdString();
  try {
    YAML::Node root = YAML::Load(c.yaml.toStdString());
    ApplyOverrides(root, overrides);
    return ParseScenario(root, file);
  } catch (const InputException& e) {
    return e.error();
  } catch (const YAML::Exception& e) {
    return InputError{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", std::string("malformed YAML: ") + e.msg};
  }
}

QString ValidationMessage(const Configuration& c) {
  const Expected<Scenario> s = ParseConfiguration(c);
  return s ? QString() : QString::fromStdString(s.error().ToString());
}

const HeatCell* ConfigOutcome::Cell(int tensor_size, int pipeline_size) const {
  for (const HeatCell& cell : heatmap) {
    if (cell.tensor == tensor_size && cell.pipeline == pipeline_size) return &cell;
  }
  return nullptr;
}

// ---------------------------------------------------------------- table model

void ResultsTableModel::SetOutcomes(const std::vector<ConfigOutcome>& outcomes) {
  beginResetModel();
  outcomes_ = outcomes;
  keys_ = FlatResultKeys();
  keys_.push_back("error");
  values_.clear();
  for (const ConfigOutcome& o : outcomes_) {
    std::vector<std::string> v;
    if (o.ran()) {
      v = FlatResultValues(o.result);
      v.push_back(o.result.error);
    } else {
      v.assign(keys_.size(), "");
      v[0] = o.name.toStdString();
      v.back() = o.input_error.toStdString();
    }
    values_.push_back(std::move(v));
  }
  endResetModel();
}

int ResultsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(keys_.size());
}

int ResultsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(outcomes_.size());
}

QString ResultsTableModel::RawValue(int row, int column) const {
  if (column < 0 || column >= static_cast<int>(values_.size())) return {};
  const auto& v = values_[column];
  return row >= 0 && row < static_cast<int>(v.size()) ? QString::fromStdString(v[row]) : QString();
}

QVariant ResultsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const QString raw = RawValue(index.row(), index.column());
  const std::string& key = keys_[index.row()];
  switch (role) {
    case Qt::DisplayRole: {
      // Numbers get a readable precision; the CSV keeps the library's digits.
      bool ok = false;
      const double v = raw.toDouble(&ok);
      if (!ok || key == "gpus" || key == "run.steps") return raw;
      if (key == "run.checkpoint_bytes") return QString::number(v / (1024.0 * 1024 * 1024), 'f', 1) + " GiB";
      if (key == "mfu" || key == "run.goodput") return QString::number(100 * v, 'f', 1) + " %";
      if (std::abs(v) >= 1e4) return QString::number(v, 'f', 0);
      return QString::number(v, 'g', 4);
    }
    case Qt::ToolTipRole:
      return raw;
    case Qt::TextAlignmentRole: {
      bool ok = false;
      raw.toDouble(&ok);
      return QVariant::fromValue(Qt::Alignment((ok ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
    }
    case Qt::FontRole: {
      // Bold where the configurations differ: what the comparison is about.
      if (values_.size() < 2 || key == "name") return {};
      for (const auto& v : values_) {
        if (v[index.row()] != values_[0][index.row()]) {
          QFont f;
          f.setBold(true);
          return f;
        }
      }
      return {};
    }
    case Qt::ForegroundRole:
      if ((key == "error" && !raw.isEmpty()) || (key == "memory.fits" && raw == "false")) return QBrush(QColor(180, 0, 0));
      return {};
    default:
      return {};
  }
}

QVariant ResultsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  if (orientation == Qt::Vertical) {
    return section >= 0 && section < static_cast<int>(keys_.size()) ? QString::fromStdString(keys_[section]) : QVariant();
  }
  return section >= 0 && section < static_cast<int>(outcomes_.size()) ? outcomes_[section].name : QVariant();
}

QString CsvField(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) return s;
  QString q = s;
  q.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + q + QLatin1Char('"');
}

QString ResultsTableModel::ToCsv() const {
  QString out = QStringLiteral("configuration");
  for (const auto& k : keys_) out += QLatin1Char(',') + CsvField(QString::fromStdString(k));
  out += QLatin1Char('\n');
  for (int c = 0; c < columnCount(); ++c) {
    out += CsvField(outcomes_[c].name);
    for (int r = 0; r < rowCount(); ++r) out += QLatin1Char(',') + CsvField(RawValue(r, c));
    out += QLatin1Char('\n');
  }
  return out;
}

// ------------------------------------------------------------ comparison sets

bool SaveComparisonSet(const QString& path, const std::vector<Configuration>& configs, QString* error) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "comparison" << YAML::Value << YAML::BeginSeq;
  for (const Configuration& c : configs) {
    YAML::Node scenario;
    try {
      scenario = YAML::Load(c.yaml.toStdString());
    } catch (const YAML::Exception& e) {
      if (error) *error = c.MessageFile() + QStringLiteral(": cannot save a configuration that is not YAML: ") + QString::fromStdString(e.msg);
      return false;
    }
    out << YAML::BeginMap << YAML::Key << "file" << YAML::Value << c.file.toStdString() << YAML::Key << "scenario"
        << YAML::Value << scenario << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = path + QStringLiteral(": cannot write: ") + f.errorString();
    return false;
  }
  f.write("# trainsim-gui comparison set: configurations compared side by side\n");
  f.write(out.c_str());
  f.write("\n");
  if (!f.commit()) {
    if (error) *error = path + QStringLiteral(": cannot write: ") + f.errorString();
    return false;
  }
  return true;
}

bool LoadComparisonSet(const QString& path, std::vector<Configuration>* configs, QString* error) {
  auto fail = [&](int line, const QString& what) {
    if (error) *error = path + (line > 0 ? QStringLiteral(":%1").arg(line) : QString()) + QStringLiteral(": ") + what;
    return false;
  };
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.toStdString());
  } catch (const YAML::BadFile&) {
    return fail(0, QStringLiteral("cannot read file"));
  } catch (const YAML::Exception& e) {
    return fail(e.mark.line + 1, QStringLiteral("malformed YAML: ") + QString::fromStdString(e.msg));
  }
  const YAML::Node list = root.IsMap() ? root["comparison"] : YAML::Node();
  if (!list || !list.IsSequence()) return fail(root.Mark().line + 1, QStringLiteral("comparison: expected a list of configurations"));
  std::vector<Configuration> loaded;
  for (const YAML::Node& entry : list) {
    const int line = entry.Mark().line + 1;
    if (!entry.IsMap() || !entry["scenario"] || !entry["scenario"].IsMap()) {
      return fail(line, QStringLiteral("comparison: each entry needs a 'scenario' mapping"));
    }
    Configuration c;
    if (entry["file"] && entry["file"].IsScalar()) c.file = QString::fromStdString(entry["file"].Scalar());
    YAML::Emitter e;
    e << entry["scenario"];
    c.yaml = QString::fromUtf8(e.c_str()) + QLatin1Char('\n');
    loaded.push_back(c);
  }
  *configs = std::move(loaded);
  return true;
}

bool ReadConfigurationFile(const QString& path, Configuration* config, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
    if (error) *error = path + QStringLiteral(": cannot read: ") + f.errorString();
    return false;
  }
  config->yaml = QString::fromUtf8(f.readAll());
  config->file = QFileInfo(path).absoluteFilePath();
  return true;
}

}  // namespace trainsim::gui
