// What each scenario key of the form means, its default and where its value
// comes from (design.md's "Scenario keys"), as the form's tooltips say it.
// One table, so the form, its tests and the Help page read the same words.
#pragma once

#include <QString>

namespace trainsim::gui {

// Tooltip text for a dotted scenario key ("cluster.nics_per_node"): meaning,
// default, source; empty for a key the table does not know.
QString FieldHelp(const QString& key);

// The Help page (rich text): what trainsim computes, how (the method), and
// how far to trust it (accuracy against published runs).
QString HelpPageHtml();

}  // namespace trainsim::gui
