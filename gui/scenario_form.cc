#include "gui/scenario_form.h"

#include "gui/field_help.h"

#include <yaml-cpp/yaml.h>

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "sim/core/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/core/split.h"
#include "sim/io/data_paths.h"

namespace trainsim::gui {

namespace {

// Marks the model combo entry that stands for inline model keys in the document.
const QString kInlineModel = QStringLiteral("(inline model keys)");
const QString kMappingItem = QStringLiteral("mapping");  // the item data of the model combo's mapping entry
// The fine-tuning combo's entry for a scenario without training.finetune.
const QString kPreTraining = QStringLiteral("none (pre-training)");

// yaml-cpp rebinds a Node variable on assignment, so the walks below pass
// fresh handles down by value instead of reassigning one.
void SetKey(YAML::Node node, const std::vector<std::string>& parts, size_t i, const YAML::Node& value) {
  if (i + 1 == parts.size()) {
    node[parts[i]] = value;
    return;
  }
  if (!node[parts[i]].IsMap()) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
  SetKey(node[parts[i]], parts, i + 1, value);
}

void RemoveKey(YAML::Node node, const std::vector<std::string>& parts, size_t i) {
  if (!node.IsMap()) return;
  if (i + 1 == parts.size()) {
    node.remove(parts[i]);
    return;
  }
  if (node[parts[i]].IsMap()) RemoveKey(node[parts[i]], parts, i + 1);
}

YAML::Node Lookup(const YAML::Node& root, const std::string& dotted) {
  YAML::Node cur = YAML::Clone(root);  // a const walk would still need fresh handles; the document is small
  for (const std::string& part : Split(dotted, '.')) {
    if (!cur.IsMap() || !cur[part]) return YAML::Node();
    const YAML::Node next = cur[part];
    cur.reset(next);
  }
  return cur;
}

bool Same(const QString& a, const QString& b) { return a.isNull() == b.isNull() && a == b; }

QStringList Names(const std::string& subdir) {
  QStringList out;
  for (const std::string& n : CatalogueNames(subdir)) out << QString::fromStdString(n);
  return out;
}

}  // namespace

QString ScenarioForm::DefaultScenarioYaml() {
  return QStringLiteral(
      "name: llama2-7b-1n\n"
      "cluster:\n"
      "  node: xe9680-h100\n"
      "  nodes: 1\n"
      "  nics_per_node: 8\n"
      "  fabric: ndr-rail-optimized\n"
      "model: llama2-7b\n"
      "parallelism:\n"
      "  tensor: 1\n"
      "  pipeline: 1\n"
      "  data: auto\n"
      "training:\n"
      "  seq_len: 4096\n"
      "  global_batch: 128\n"
      "  micro_batch: 1\n"
      "  steps: 500\n"
      "  precision: bf16\n"
      "  recompute: none\n");
}

ScenarioForm::ScenarioForm(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  message_label_ = new QLabel(this);
  message_label_->setObjectName(QStringLiteral("validationMessage"));
  message_label_->setWordWrap(true);
  message_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(message_label_);

  auto section = [&](const QString& title) {
    auto* box = new QGroupBox(title, this);
    section_ = new QFormLayout(box);
    section_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    outer->addWidget(box);
  };

  section(tr("Scenario"));
  AddName();

  section(tr("Cluster"));
  AddCombo("cluster.node", tr("&Node profile"), Names("hardware-profiles/nodes"), true);
  AddSpin("cluster.nodes", tr("N&odes"), 1, 1 << 20, 1);
  AddSpin("cluster.nics_per_node", tr("NICs per node"), 0, 64, 0, tr("profile default"));
  AddSpin("cluster.nodes_per_nvlink_domain", tr("Nodes per NVLink domain"), 0, 1024, 0, tr("launcher's rule"));
  AddCombo("cluster.fabric", tr("&Fabric"), Names("hardware-profiles/fabrics"), true);
  AddCombo("cluster.storage", tr("Storage"), QStringList{tr("(none)")} + Names("hardware-profiles/storage"), true, tr("(none)"));
  AddSpin("cluster.storage_nodes", tr("Storage nodes"), 0, 10000, 0, tr("profile default"));

  section(tr("Model"));
  AddModelField();

  section(tr("Parallelism"));
  AddSpin("parallelism.tensor", tr("&Tensor (TP)"), 1, 1024, 1);
  AddSpin("parallelism.pipeline", tr("&Pipeline (PP)"), 1, 1024, 1);
  AddSpin("parallelism.context", tr("Context (CP)"), 1, 1024, 1);
  AddSpin("parallelism.data", tr("Data (DP)"), 0, 1 << 20, 0, tr("auto"), QStringLiteral("auto"));
  AddSpin("parallelism.virtual_stages", tr("Virtual stages"), 1, 128, 1);
  const QStringList tri{tr("default"), QStringLiteral("true"), QStringLiteral("false")};
  AddCombo("parallelism.sequence_parallel", tr("Sequence parallel"), tri, false, tr("default"));
  AddCombo("parallelism.distributed_optimizer", tr("Distributed optimizer"), tri, false, tr("default"));
  // What the data-parallel ranks shard (ZeRO-1/2, FSDP) and, for HSDP, over how many of them.
  QStringList sharding{tr("default")};
  for (const auto& m : DataShardingNames()) sharding << QString::fromStdString(m);
  AddCombo("parallelism.data_sharding", tr("Data sharding"), sharding, false, tr("default"));
  AddSpin("parallelism.sharding_group", tr("Sharding group (HSDP)"), 0, 1 << 20, 0, tr("all data-parallel ranks"));
  // Mixtures of experts: the expert groups and how tokens reach them.
  AddSpin("parallelism.expert", tr("&Expert (EP)"), 1, 1024, 1);
  AddSpin("parallelism.expert_tensor", tr("Expert tensor (ETP)"), 0, 1024, 0, tr("framework default"));
  QStringList dispatchers{tr("default")};
  for (const auto& d : MoeDispatcherNames()) dispatchers << QString::fromStdString(d);
  AddCombo("parallelism.moe_dispatcher", tr("MoE dispatcher"), dispatchers, false, tr("default"));
  AddCombo("parallelism.moe_a2a_overlap", tr("MoE all-to-all overlap"), tri, false, tr("default"));

  section(tr("Training"));
  AddSpin("training.seq_len", tr("Sequence length"), 1, 1 << 24, 4096);
  AddSpin("training.global_batch", tr("&Global batch"), 1, 1 << 26, 1);
  AddSpin("training.micro_batch", tr("&Micro batch"), 0, 1 << 16, 1, tr("auto"), QStringLiteral("auto"));
  AddSpin("training.steps", tr("Steps"), 1, 2000000000, 1);
  AddCombo("training.precision", tr("Precision"), {"bf16", "fp16", "fp8", "fp8-blockwise", "fp8-rowwise", "mxfp8", "nvfp4"}, false);
  AddCombo("training.recompute", tr("Recompute"), {"none", "selective", "full"}, false);
  AddCombo("training.finetune.method", tr("Fine-tuning"), {kPreTraining, "lora", "full"}, false, kPreTraining);
  AddSpin("training.finetune.rank", tr("LoRA rank"), 0, 1 << 16, 0, tr("default"));

  section(tr("Checkpoint"));
  AddSpin("checkpoint.every_steps", tr("Every (steps)"), 0, 2000000000, 0, tr("never"), QStringLiteral("0"));
  AddCombo("checkpoint.contents", tr("Contents"), {"full", "weights"}, false);
  AddCombo("checkpoint.mode", tr("Mode"), {"sync", "async"}, false);

  section(tr("Cost"));
  AddCombo("cost.model", tr("Cost model"), {tr("default"), "rental", "ownership"}, false, tr("default"));
  outer->addStretch(1);
  // The rank is a LoRA key: with another method the form leaves it out (configuration()).
  auto* method = findChild<QComboBox*>(QStringLiteral("training.finetune.method"));
  auto* rank = findChild<QSpinBox*>(QStringLiteral("training.finetune.rank"));
  const auto lora_only = [method, rank] { rank->setEnabled(method->currentText() == QLatin1String("lora")); };
  connect(method, &QComboBox::currentTextChanged, rank, lora_only);
  lora_only();
  // Every field says what its key means, its default and where the value comes from.
  for (const Field& f : fields_) {
    const QString help = FieldHelp(QString::fromStdString(f.key));
    if (help.isEmpty()) continue;
    f.widget->setToolTip(help);
  }

  SetConfiguration(Configuration{DefaultScenarioYaml(), QString()});
}

void ScenarioForm::AddName() {
  auto* edit = new QLineEdit(this);
  edit->setObjectName(QStringLiteral("name"));
  section_->addRow(tr("Na&me"), edit);
  Field f;
  f.key = "name";
  f.widget = edit;
  f.show = [edit](const YAML::Node& n) { edit->setText(n.IsScalar() ? QString::fromStdString(n.Scalar()) : QString()); };
  f.current = [edit]() { return edit->text().isEmpty() ? QString() : edit->text(); };
  connect(edit, &QLineEdit::textChanged, this, &ScenarioForm::OnWidgetChanged);
  fields_.push_back(std::move(f));
}

void ScenarioForm::AddSpin(const char* key, const QString& label, int min, int max, int fallback, const QString& special,
                           const QString& special_yaml) {
  auto* spin = new QSpinBox(this);
  spin->setObjectName(QString::fromLatin1(key));
  spin->setRange(min, max);
  spin->setAccelerated(true);
  if (!special.isEmpty()) spin->setSpecialValueText(special);
  section_->addRow(label, spin);
  Field f;
  f.key = key;
  f.widget = spin;
  f.show = [spin, fallback, special, special_yaml, min](const YAML::Node& n) {
    if (n.IsScalar() && !special.isEmpty() && !special_yaml.isNull() && QString::fromStdString(n.Scalar()) == special_yaml) {
      spin->setValue(min);
      return;
    }
    try {
      spin->setValue(n.IsScalar() ? n.as<int>() : fallback);
    } catch (const YAML::Exception&) {
      spin->setValue(fallback);  // unreadable: the document keeps its text, validation reports it
    }
  };
  f.current = [spin, min, special, special_yaml]() -> QString {
    if (!special.isEmpty() && spin->value() == min) return special_yaml;
    return QString::number(spin->value());
  };
  connect(spin, &QSpinBox::valueChanged, this, &ScenarioForm::OnWidgetChanged);
  fields_.push_back(std::move(f));
}

void ScenarioForm::AddCombo(const char* key, const QString& label, const QStringList& items, bool editable,
                            const QString& absent_item) {
  auto* combo = new QComboBox(this);
  combo->setObjectName(QString::fromLatin1(key));
  combo->setEditable(editable);
  combo->addItems(items);
  section_->addRow(label, combo);
  Field f;
  f.key = key;
  f.widget = combo;
  f.show = [combo, absent_item](const YAML::Node& n) {
    if (!n.IsScalar()) {
      combo->setCurrentIndex(absent_item.isEmpty() ? 0 : combo->findText(absent_item));
      return;
    }
    const QString v = QString::fromStdString(n.Scalar());
    int i = combo->findText(v);
    if (i < 0) {
      combo->addItem(v);  // keep unknown values so validation can name them
      i = combo->count() - 1;
    }
    combo->setCurrentIndex(i);
  };
  f.current = [combo, absent_item]() -> QString {
    const QString t = combo->currentText();
    return (!absent_item.isEmpty() && t == absent_item) ? QString() : t;
  };
  connect(combo, &QComboBox::currentTextChanged, this, &ScenarioForm::OnWidgetChanged);
  fields_.push_back(std::move(f));
}

void ScenarioForm::AddModelField() {
  auto* row = new QWidget(this);
  auto* h = new QHBoxLayout(row);
  h->setContentsMargins(0, 0, 0, 0);
  model_combo_ = new QComboBox(row);
  model_combo_->setObjectName(QStringLiteral("model"));
  model_combo_->setEditable(true);
  model_combo_->addItems(Names("models/catalogue"));
  model_combo_->setToolTip(tr("A catalogue name, or a path to a model .yaml or a Hugging Face config.json"));
  auto* browse = new QToolButton(row);
  browse->setText(QStringLiteral("…"));
  browse->setToolTip(tr("Choose a model file"));
  h->addWidget(model_combo_, 1);
  h->addWidget(browse);
  section_->addRow(tr("Mo&del"), row);
  connect(browse, &QToolButton::clicked, this, &ScenarioForm::BrowseModel);
  QComboBox* combo = model_combo_;
  Field f;
  f.key = "model";
  f.widget = combo;
  // A mapping (inline keys, or a config.json with keys accepted unread) shows
  // as one item of its own, marked in its data: left alone, the document keeps it.
  f.show = [combo](const YAML::Node& n) {
    const int mapping_index = combo->findData(kMappingItem);
    if (mapping_index >= 0) combo->removeItem(mapping_index);
    if (n.IsMap()) {
      const YAML::Node file = n["file"];
      const bool has_file = file.IsDefined() && file.IsScalar();
      const YAML::Node accept = n["accept_unknown_keys"];
      const bool accepts = accept.IsDefined() && !accept.IsNull();
      const QString label = !has_file ? kInlineModel
                            : accepts ? QStringLiteral("%1 (accepting unknown keys)").arg(QString::fromStdString(file.Scalar()))
                                      : QStringLiteral("%1 (with run options)").arg(QString::fromStdString(file.Scalar()));
      combo->insertItem(0, label, kMappingItem);
      combo->setCurrentIndex(0);
      return;
    }
    const QString v = n.IsScalar() ? QString::fromStdString(n.Scalar()) : QString();
    const int i = combo->findText(v);
    if (i >= 0) combo->setCurrentIndex(i);
    else combo->setEditText(v);
  };
  f.current = [combo]() -> QString {
    const QString t = combo->currentText();
    return t.isEmpty() ? QString() : t;
  };
  connect(combo, &QComboBox::currentTextChanged, this, &ScenarioForm::OnWidgetChanged);
  fields_.push_back(std::move(f));
}

const ScenarioForm::Field* ScenarioForm::FieldOf(const std::string& key) const {
  for (const Field& f : fields_) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

void ScenarioForm::BrowseModel() {
  const QString dir = file_.isEmpty() ? QString::fromStdString(DataDir() + "/models/catalogue") : QFileInfo(file_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Model file"), dir, tr("Model (*.yaml *.yml *.json)"));
  if (path.isEmpty()) return;
  model_combo_->setEditText(file_.isEmpty() ? path : QFileInfo(file_).absoluteDir().relativeFilePath(path));
}

void ScenarioForm::SetConfiguration(const Configuration& config) {
  yaml_ = config.yaml.toStdString();
  file_ = config.file;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_);
  } catch (const YAML::Exception&) {
    root = YAML::Node();  // widgets show defaults; validation shows the parse error
  }
  loading_ = true;
  for (Field& f : fields_) {
    f.show(root.IsMap() ? Lookup(root, f.key) : YAML::Node());
    f.loaded = f.current();
  }
  loading_ = false;
  Revalidate();
}

Configuration ScenarioForm::configuration() const {
  Configuration c{QString::fromStdString(yaml_), file_};
  bool changed = false;
  for (const Field& f : fields_) changed = changed || !Same(f.current(), f.loaded);
  if (!changed) return c;  // the document as loaded, comments and all
  YAML::Node root;
  try {
    root = YAML::Load(yaml_);
  } catch (const YAML::Exception&) {
    root = YAML::Node();
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  for (const Field& f : fields_) {
    const QString cur = f.current();
    if (Same(cur, f.loaded)) continue;
    const std::vector<std::string> parts = Split(f.key, '.');
    if (cur.isNull()) {
      RemoveKey(root, parts, 0);
    } else {
      // A plain string node: yaml-cpp keeps scalars as text, and a name such
      // as "a: b" must not turn into a mapping.
      SetKey(root, parts, 0, YAML::Node(cur.toStdString()));
    }
  }
  // A method chosen in the form takes the fine-tuning section with it: pre-training
  // has none, and only LoRA reads the adapter's keys (the scenario loader refuses
  // them beside another method).
  if (const Field* method = FieldOf("training.finetune.method"); method && !Same(method->current(), method->loaded)) {
    if (method->current().isNull()) {
      RemoveKey(root, {"training", "finetune"}, 0);
    } else if (method->current() != QLatin1String("lora")) {
      for (const std::string& key : LoraOnlyKeys()) RemoveKey(root, {"training", "finetune", key}, 0);
    }
  }
  YAML::Emitter out;
  out << root;
  c.yaml = QString::fromUtf8(out.c_str()) + QLatin1Char('\n');
  return c;
}

void ScenarioForm::OnWidgetChanged() {
  if (loading_) return;
  Revalidate();
  emit edited();
}

void ScenarioForm::Revalidate() {
  const bool was_valid = IsValid();
  message_ = gui::ValidationMessage(configuration());
  message_label_->setText(message_.isEmpty() ? tr("✓ Scenario is valid") : message_);
  message_label_->setStyleSheet(message_.isEmpty() ? QStringLiteral("color: #1b7f2a;")
                                                   : QStringLiteral("color: #b00020; font-weight: bold;"));
  if (was_valid != IsValid()) emit validityChanged(IsValid());
}

}  // namespace trainsim::gui
