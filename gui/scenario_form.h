// ScenarioForm: the cluster / model / parallelism / training / checkpoint form
// of one configuration. It edits a scenario YAML document: SetConfiguration
// fills the widgets, configuration() writes back only the keys whose widget
// differs from what was loaded (so keys the form does not show, and values it
// cannot show, pass through untouched). Every edit is validated with the
// library's ParseScenario on that document, so the message is the CLI's
// "FILE:LINE: KEY: what". Each input widget's objectName is its dotted key
// (e.g. "parallelism.tensor"): tests and shortcuts find them by it.
#pragma once

#include <QString>
#include <QWidget>
#include <functional>
#include <vector>

#include "gui/comparison.h"

class QLabel;
class QComboBox;
class QFormLayout;

namespace YAML { class Node; }

namespace trainsim::gui {

class ScenarioForm : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioForm(QWidget* parent = nullptr);

  // Loads a configuration into the widgets (no edited() signal).
  void SetConfiguration(const Configuration& config);
  // The loaded document with the form's changes applied.
  Configuration configuration() const;

  bool IsValid() const { return message_.isEmpty(); }
  QString ValidationMessage() const { return message_; }

  // A starting scenario for "New": Llama 2 7B on one XE9680 node.
  static QString DefaultScenarioYaml();

 signals:
  // The user changed a value; the form has been revalidated.
  void edited();
  void validityChanged(bool valid);

 private:
  // One editable key: how to show a YAML value and how to read the widget
  // back as YAML scalar text (a null QString means "key absent").
  struct Field {
    std::string key;
    QWidget* widget = nullptr;
    std::function<void(const YAML::Node&)> show;
    std::function<QString()> current;
    QString loaded;  // current() right after loading
  };

  // A spin box; at its minimum it shows `special` and writes `special_yaml`
  // (a null QString: the key is left out).
  void AddSpin(const char* key, const QString& label, int min, int max, int fallback, const QString& special = {},
               const QString& special_yaml = {});
  // A combo box; `absent_item` selected means the key is left out.
  void AddCombo(const char* key, const QString& label, const QStringList& items, bool editable,
                const QString& absent_item = {});
  void AddName();
  void AddModelField();
  // The field editing `key`; null where the form has none.
  const Field* FieldOf(const std::string& key) const;
  void Revalidate();
  void OnWidgetChanged();
  void BrowseModel();

  std::vector<Field> fields_;
  std::string yaml_;  // the loaded document
  QString file_;
  QString message_;
  bool loading_ = false;
  QFormLayout* section_ = nullptr;  // where Add* puts the next field
  QLabel* message_label_ = nullptr;
  QComboBox* model_combo_ = nullptr;
};

}  // namespace trainsim::gui
