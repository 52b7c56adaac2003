#include "gui/comparison.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/yaml_reader.h"
#include "sim/io/result_writer.h"
#include "sim/report/comparison.h"
#include "sim/report/result_format.h"

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
  return CatchInputErrors<Scenario>(file, [&]() -> Expected<Scenario> {
    YAML::Node root = ParseYamlText(c.yaml.toStdString(), file);
    ApplyOverrides(root, overrides);
    return ParseScenario(root, file);
  });
}

QString ValidationMessage(const Configuration& c) {
  const Expected<Scenario> s = ParseConfiguration(c);
  return s ? QString() : QString::fromStdString(s.error().ToString());
}

int ValidationExitStatus(const Configuration& c) {
  const Expected<Scenario> s = ParseConfiguration(c);
  return s ? 0 : ExitStatus(s.error().kind);
}

const HeatCell* ConfigOutcome::Cell(int tensor_size, int pipeline_size) const {
  for (const HeatCell& cell : heatmap) {
    if (cell.tensor == tensor_size && cell.pipeline == pipeline_size) return &cell;
  }
  return nullptr;
}

// ---------------------------------------------------------------- table model

std::pair<int, int> SharedEnds(const QStringList& names) {
  if (names.size() < 2) return {0, 0};
  int prefix = static_cast<int>(names[0].size()), suffix = prefix;
  for (const QString& n : names) {
    int p = 0;
    while (p < prefix && p < n.size() && n[p] == names[0][p]) ++p;
    prefix = p;
    int q = 0;
    while (q < suffix && q < n.size() && n[n.size() - 1 - q] == names[0][names[0].size() - 1 - q]) ++q;
    suffix = q;
  }
  return {prefix, suffix};
}

namespace {

// What all the names share at either end, cut to what room leaves of it as
// context: two 120-character names that differ in "8x" and "4x" in their
// middle keep that middle ("…16-nodes-8x-connectx7…"); then the middle of
// what is still too long.
QStringList ShortenSharedEnds(const QStringList& names, int most_chars) {
  const auto [prefix, suffix] = SharedEnds(names);
  QStringList out;
  for (const QString& n : names) {
    if (n.size() <= most_chars) {
      out << n;
      continue;
    }
    QString s = n;
    const int distinct = prefix + suffix <= n.size() ? static_cast<int>(n.size()) - prefix - suffix : 0;
    const int context = std::max(3, (most_chars - distinct - 2) / 2);
    const int cut_front = prefix > context ? prefix - context : 0;
    const int cut_back = suffix > context && cut_front + suffix <= n.size() ? suffix - context : 0;
    s = s.mid(cut_front, s.size() - cut_front - cut_back);
    if (cut_front > 0) s.prepend(QStringLiteral("…"));
    if (cut_back > 0) s.append(QStringLiteral("…"));
    // Still too long: the middle goes.
    if (s.size() > most_chars) s = s.left(most_chars / 2 - 1) + QStringLiteral("…") + s.right(most_chars / 2);
    out << s;
  }
  return out;
}

}  // namespace

QStringList ShortConfigurationNames(const QStringList& names, int most_chars) {
  QStringList out = ShortenSharedEnds(names, most_chars);
  // Names that came out alike (a third name shortened what all three share)
  // are shortened among themselves, whose shared ends are longer; any still
  // alike are numbered: a chart merges bars of one label.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < out.size(); ++i) {
      QList<int> same;
      for (int j = 0; j < out.size(); ++j) {
        if (j != i && out[j] == out[i] && (pass == 1 || names[j] != names[i])) same << j;
      }
      if (same.isEmpty()) continue;
      same.prepend(i);
      QStringList group;
      for (int j : same) group << names[j];
      const QStringList shorter = pass == 0 ? ShortenSharedEnds(group, most_chars) : QStringList();
      for (int k = 0; k < same.size(); ++k) {
        out[same[k]] = pass == 0 ? shorter[k] : QStringLiteral("#%1 ").arg(same[k] + 1) + out[same[k]].left(std::max(1, most_chars - 4));
      }
    }
  }
  return out;
}

void ResultsTableModel::SetOutcomes(const std::vector<ConfigOutcome>& outcomes) {
  beginResetModel();
  outcomes_ = outcomes;
  QStringList names;
  for (const ConfigOutcome& o : outcomes_) names << o.name;
  short_names_ = ShortConfigurationNames(names, kResultColumnChars);
  csv_keys_ = FlatResultKeys();
  csv_keys_.push_back("error");
  csv_values_.clear();
  for (const ConfigOutcome& o : outcomes_) {
    std::vector<std::string> v;
    if (o.ran()) {
      v = FlatResultValues(o.result);
      v.push_back(o.result.error);
    } else {
      v.assign(csv_keys_.size(), "");
      v[0] = o.name.toStdString();
      v.back() = o.input_error.toStdString();
    }
    csv_values_.push_back(std::move(v));
  }
  rows_.clear();
  // Every field of the result-field table in reading order; the name is the column's header.
  for (const ResultField* f : DisplayFields()) {
    if (f->key != "name") rows_.push_back({f->key, f});
  }
  endResetModel();
}

int ResultsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ResultsTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || outcomes_.empty()) return 0;
  return 1 + 3 * (static_cast<int>(outcomes_.size()) - 1);
}

int ResultsTableModel::ValueColumn(int configuration) const { return configuration == 0 ? 0 : 1 + 3 * (configuration - 1); }

int ResultsTableModel::ConfigurationOf(int column) const { return column <= 0 ? 0 : 1 + (column - 1) / 3; }

ResultsTableModel::ColumnKind ResultsTableModel::KindOf(int column) const {
  if (column <= 0) return ColumnKind::kValue;
  return static_cast<ColumnKind>((column - 1) % 3);
}

int ResultsTableModel::RowOf(const QString& key) const {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (QString::fromStdString(rows_[r].key) == key) return static_cast<int>(r);
  }
  return -1;
}


QVariant ResultsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const Row& row = rows_[index.row()];
  const int config = ConfigurationOf(index.column());
  if (config >= static_cast<int>(outcomes_.size())) return {};
  const ConfigOutcome& o = outcomes_[config];
  const ColumnKind kind = KindOf(index.column());
  const ConfigOutcome& base = outcomes_[0];
  const bool text = row.field->is_text();
  // Figures of a run that cannot happen are not shown as if it could (the
  // rule JSON and CSV follow: ResultField::HoldsFor); what the configuration is, is.
  const bool numeric = !text && o.ran() && row.field->HoldsFor(o.result);
  const bool base_numeric = !text && base.ran() && row.field->HoldsFor(base.result);
  switch (role) {
    case Qt::DisplayRole: {
      if (text) {
        // A long reason would widen its column past the screen: the cell
        // shows its start, the tooltip all of it.
        constexpr int kMaxCellChars = 60;
        const QVariant tip = data(index, Qt::ToolTipRole);
        if (!tip.isValid()) return {};
        const QString full = tip.toString();
        return full.size() > kMaxCellChars ? full.left(kMaxCellChars - 1).trimmed() + QChar(0x2026) : full;
      }
      if (!o.ran()) return {};
      if (!numeric) return kind == ColumnKind::kValue ? tr("cannot run") : QString();
      // Null in JSON and empty in CSV too, and why ("not modelled", "no checkpoints").
      if (!row.field->Present(o.result)) return kind == ColumnKind::kValue ? QString::fromStdString(row.field->absent) : QString();
      const double v = row.field->get(o.result);
      if (kind == ColumnKind::kValue) return QString::fromStdString(FormatValue(*row.field, v));
      if (!base_numeric) return {};
      const double b = row.field->get(base.result);
      if (kind == ColumnKind::kDelta) return QString::fromStdString(FormatDelta(*row.field, b, v));
      if (row.field->quantity == Quantity::kBool || b == 0) return {};
      return QString::fromStdString(FormatRelative(CleanRelative(b, v)));
    }
    case Qt::ToolTipRole: {
      if (text) {
        if (kind != ColumnKind::kValue) return {};
        if (!o.ran()) return row.key == "error" ? o.input_error : QString();
        return row.field->Present(o.result) ? QString::fromStdString(row.field->text(o.result)) : QString();
      }
      QString tip = QString::fromStdString(row.field->label) + QStringLiteral(" (") + QString::fromStdString(row.key) +
                    QStringLiteral(")");
      if (o.ran()) tip += QStringLiteral(": ") + QString::number(row.field->get(o.result), 'g', 17);
      if (o.ran() && !o.result.error.empty()) tip += tr("\n%1 cannot run: %2").arg(o.name, QString::fromStdString(o.result.error));
      return tip;
    }
    case kRawValueRole:
      if (text || !o.ran()) return {};
      return row.field->get(o.result);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment((text ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
    case Qt::FontRole: {
      // Bold where the configurations differ: what the comparison is about.
      if (text || outcomes_.size() < 2 || kind != ColumnKind::kValue) return {};
      for (const auto& other : outcomes_) {
        // n/a against n/a (both unbounded) is no difference: the delta is NaN.
        const double d = other.ran() && base.ran() ? CleanDelta(row.field->get(base.result), row.field->get(other.result)) : 0;
        if (d != 0 && !std::isnan(d)) {
          QFont f;
          f.setBold(true);
          return f;
        }
      }
      return {};
    }
    case Qt::ForegroundRole: {
      if ((row.key == "error" && o.ran() && !o.result.error.empty()) || !o.input_error.isEmpty()) return QBrush(QColor(180, 0, 0));
      if (row.key == "memory.fits" && o.ran() && !o.result.memory.fits) return QBrush(QColor(180, 0, 0));
      if (numeric && !o.ran()) return {};
      if (kind != ColumnKind::kValue && numeric && base_numeric && row.field->quantity != Quantity::kBool &&
          row.field->quantity != Quantity::kCount) {
        // Deltas coloured by whether they help: green better, red worse.
        const double d = CleanDelta(row.field->get(base.result), row.field->get(o.result));
        if (d == 0 || std::isnan(d)) return QBrush(QColor(0x70, 0x70, 0x70));
        const bool better = row.field->lower_is_better ? d < 0 : d > 0;
        return QBrush(better ? QColor(0x1a, 0x7f, 0x37) : QColor(0xb0, 0x20, 0x20));
      }
      if (!numeric && !text && kind == ColumnKind::kValue) return QBrush(QColor(0x80, 0x80, 0x80));
      return {};
    }
    default:
      return {};
  }
}

QVariant ResultsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Vertical) {
    if (section < 0 || section >= static_cast<int>(rows_.size())) return {};
    const Row& row = rows_[section];
    if (role == Qt::DisplayRole) {
      return QString::fromStdString(DisplayLabel(*row.field));
    }
    if (role == Qt::ToolTipRole) return QString::fromStdString(row.key);
    return {};
  }
  if (section < 0 || section >= columnCount()) return {};
  const int config = ConfigurationOf(section);
  const QString name = outcomes_[config].name;
  if (role == Qt::DisplayRole) {
    switch (KindOf(section)) {
      case ColumnKind::kValue: {
        // Long names shortened (the tooltip has them whole): a header as wide
        // as a 120-character name pushed every value out of view.
        const QString shown = config < short_names_.size() ? short_names_[config] : name;
        return config == 0 ? tr("Baseline\n%1").arg(shown) : shown;
      }
      case ColumnKind::kDelta: return tr("Δ vs baseline");
      case ColumnKind::kRelative: return tr("Δ %");
    }
  }
  if (role == Qt::ToolTipRole) {
    if (config == 0) return tr("%1: the baseline every other configuration is compared with").arg(name);
    return tr("%1 against the baseline %2 (green: better, red: worse)").arg(name, outcomes_[0].name);
  }
  return {};
}

QString ResultsTableModel::RawValue(int row, int column) const {
  if (column < 0 || column >= static_cast<int>(csv_values_.size())) return {};
  const auto& v = csv_values_[column];
  return row >= 0 && row < static_cast<int>(v.size()) ? QString::fromStdString(v[row]) : QString();
}

std::vector<QString> ResultsTableModel::Headlines() const {
  std::vector<QString> out;
  for (size_t i = 1; i < outcomes_.size(); ++i) {
    const ConfigOutcome& o = outcomes_[i];
    if (!o.ran()) out.push_back(o.name + tr(": the scenario does not parse: ") + o.input_error);
    else if (!outcomes_[0].ran()) out.push_back(o.name + tr(": no baseline to compare with (it does not parse)"));
    else out.push_back(QString::fromStdString(Headline(outcomes_[0].result, o.result)));
  }
  return out;
}

QString CsvField(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n'))) return s;
  QString q = s;
  q.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + q + QLatin1Char('"');
}

QString ResultsTableModel::ToCsv() const {
  QString out = QStringLiteral("configuration");
  for (const auto& k : csv_keys_) out += QLatin1Char(',') + CsvField(QString::fromStdString(k));
  out += QLatin1Char('\n');
  for (int c = 0; c < static_cast<int>(outcomes_.size()); ++c) {
    out += CsvField(outcomes_[c].name);
    for (int r = 0; r < static_cast<int>(csv_keys_.size()); ++r) out += QLatin1Char(',') + CsvField(RawValue(r, c));
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
