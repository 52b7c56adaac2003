// trainsim-gui [SCENARIO...]
// trainsim-gui --screenshot OUT.png [--size WxH] [--scale S] [--fidelity des|analytical] [--whole-window]
//              [--panel NAME [--zoom FROM_MS:TO_MS]] [SCENARIO...]
//
// Without --screenshot: the desktop application, with the given scenarios as
// configurations. With it: open the scenarios (default: the reference design's
// Llama 2 70B on 4 nodes with 8 and with 4 ConnectX-7), run them, render the
// comparison view offscreen to OUT.png and exit: 0 written, 1 a configuration
// could not run (the image is written, showing it) or the image could not be
// written, 2 bad input (the CLI's one-line message on stderr). --panel renders
// one panel (heatmap, timeline, ...) alone at --size; --zoom sets the
// timeline's window.
#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QFileInfo>
#include <QMessageBox>
#include <QPixmap>
#include <QRegularExpression>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QThread>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/charts.h"
#include "gui/comparison_view.h"
#include "gui/main_window.h"
#include "gui/runner.h"
#include "gui/scenario_form.h"
#include "sim/io/data_paths.h"

namespace {

QStringList DefaultScreenshotScenarios() {
  QStringList out;
  for (const QString& stem : {QStringLiteral("llama2-70b-4n-8nic"), QStringLiteral("llama2-70b-4n-4nic")}) {
    const QString data = QString::fromStdString(trainsim::DataDir());
    for (const QString& dir : {data + QStringLiteral("/examples/reference-design"), data + QStringLiteral("/examples"),
                               QStringLiteral(TRAINSIM_SOURCE_DIR "/gui/testdata")}) {
      const QString p = dir + QLatin1Char('/') + stem + QStringLiteral(".yaml");
      if (QFileInfo::exists(p)) {
        out << p;
        break;
      }
    }
  }
  return out;
}

void Print(FILE* to, const QString& s) { std::fprintf(to, "%s\n", s.toLocal8Bit().constData()); }

}  // namespace

int main(int argc, char** argv) {
  bool screenshot = false, text_only = false;
  for (int i = 1; i < argc; ++i) {
    const QByteArray a(argv[i]);
    screenshot = screenshot || a == "--screenshot";
    text_only = text_only || a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v";
  }
  // A screenshot, the help and the version need no display.
  if ((screenshot || text_only) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("trainsim"));
  QApplication::setApplicationName(QStringLiteral("trainsim-gui"));
  QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Compare cluster and parallelism options for LLM training."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Run the scenarios, render the comparison view to FILE.png, exit."),
                                QStringLiteral("FILE.png"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Size of the rendered view (default 1920x1080)."),
                                QStringLiteral("WxH"), QStringLiteral("1920x1080"));
  const QCommandLineOption scale(QStringLiteral("scale"), QStringLiteral("Device pixels per logical pixel of the image (default 1)."),
                                 QStringLiteral("S"), QStringLiteral("1"));
  const QCommandLineOption fidelity(QStringLiteral("fidelity"), QStringLiteral("des or analytical (default: the last used in the application, at first des; --screenshot: des)."),
                                    QStringLiteral("F"));
  const QCommandLineOption whole(QStringLiteral("whole-window"),
                                 QStringLiteral("With --screenshot: render the whole window (form and menus too), not only the comparison view."));
  const QCommandLineOption panel(QStringLiteral("panel"),
                                 QStringLiteral("With --screenshot: render one panel alone at --size (breakdown, memory, scaling-time, "
                                                "scaling-cost, heatmap, timeline)."),
                                 QStringLiteral("NAME"));
  const QCommandLineOption zoom(QStringLiteral("zoom"), QStringLiteral("With --panel timeline: show FROM_MS to TO_MS of the step."),
                                QStringLiteral("FROM_MS:TO_MS"));
  const QCommandLineOption grab(QStringLiteral("grab-display"),
                                QStringLiteral("With --screenshot on a real display (QT_QPA_PLATFORM=xcb, e.g. under Xvfb): save what the "
                                               "display shows of the window, not a render of its widgets."));
  parser.addOptions({shot, size, scale, fidelity, whole, panel, zoom, grab});
  parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("Scenario YAML files to compare."), QStringLiteral("[SCENARIO...]"));
  // Bad options are bad input, exit 2 as the CLI's (QCommandLineParser::process exits 1).
  if (!parser.parse(QCoreApplication::arguments())) {
    Print(stderr, QStringLiteral("trainsim-gui: ") + parser.errorText());
    return 2;
  }
  if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);
  if (parser.isSet(QStringLiteral("version"))) parser.showVersion();
  // The rendering options say how to write an image: without --screenshot
  // they would open the window (a script waiting on it would never return).
  if (!parser.isSet(shot)) {
    for (const QCommandLineOption* o : {&size, &scale, &whole, &panel, &zoom, &grab}) {
      if (parser.isSet(*o)) {
        Print(stderr, QStringLiteral("trainsim-gui: --%1 goes with --screenshot FILE.png").arg(o->names().front()));
        return 2;
      }
    }
  }

  // A screenshot neither reads nor writes the user's settings (last fidelity,
  // recent files, geometry): a scripted render is the same on every machine
  // and leaves the desktop application as it was.
  QTemporaryDir screenshot_settings;
  if (screenshot) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, screenshot_settings.path());
  }
  trainsim::gui::MainWindow window;
  if (parser.isSet(fidelity)) {
    const QString f = parser.value(fidelity);
    if (f != QLatin1String("des") && f != QLatin1String("analytical")) {
      Print(stderr, QStringLiteral("trainsim-gui: --fidelity: '%1' is not one of: des, analytical").arg(f));
      return 2;
    }
    window.SetFidelity(f == QLatin1String("des") ? trainsim::Fidelity::kDes : trainsim::Fidelity::kAnalytical);
  }
  QStringList scenarios = parser.positionalArguments();
  if (screenshot && scenarios.isEmpty()) scenarios = DefaultScreenshotScenarios();
  for (const QString& path : scenarios) {
    QString err;
    if (!window.OpenScenario(path, &err)) {
      Print(stderr, err);
      if (screenshot) return 2;
    }
  }

  if (!screenshot) {
    if (scenarios.isEmpty()) window.AddConfiguration({trainsim::gui::ScenarioForm::DefaultScenarioYaml(), QString()});
    window.show();
    return app.exec();
  }

  const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("^(\\d{1,5})x(\\d{1,5})$")).match(parser.value(size));
  bool scale_ok = false;
  const double image_scale = parser.value(scale).toDouble(&scale_ok);
  // Bounded so that a typo cannot ask for gigabytes of pixels.
  constexpr int kMinSidePx = 200, kMaxSidePx = 16384;
  const int width_px = m.hasMatch() ? m.captured(1).toInt() : 0, height_px = m.hasMatch() ? m.captured(2).toInt() : 0;
  if (!m.hasMatch() || width_px < kMinSidePx || width_px > kMaxSidePx || height_px < kMinSidePx || height_px > kMaxSidePx) {
    Print(stderr, QStringLiteral("trainsim-gui: --size: '%1' is not WxH with each side from %2 to %3 pixels")
                      .arg(parser.value(size)).arg(kMinSidePx).arg(kMaxSidePx));
    return 2;
  }
  if (!scale_ok || !(image_scale > 0 && image_scale <= 8) || width_px * image_scale * height_px * image_scale > 268435456.0) {
    Print(stderr, QStringLiteral("trainsim-gui: --scale: '%1' is not a number with 0 < S <= 8 (and at most 256 megapixels "
                                 "in the image)").arg(parser.value(scale)));
    return 2;
  }
  if (parser.isSet(zoom) && !parser.isSet(panel)) {
    Print(stderr, QStringLiteral("trainsim-gui: --zoom FROM_MS:TO_MS goes with --panel timeline"));
    return 2;
  }
  // The image is written as PNG: another name would hold PNG bytes under the wrong suffix.
  if (!parser.value(shot).endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) {
    Print(stderr, QStringLiteral("trainsim-gui: --screenshot: '%1' is not a .png file name").arg(parser.value(shot)));
    return 2;
  }
  double zoom_from_ms = 0, zoom_to_ms = 0;
  if (parser.isSet(zoom)) {
    const QStringList parts = parser.value(zoom).split(QLatin1Char(':'));
    bool from_ok = false, to_ok = false;
    if (parts.size() == 2) {
      zoom_from_ms = parts[0].toDouble(&from_ok);
      zoom_to_ms = parts[1].toDouble(&to_ok);
    }
    if (!from_ok || !to_ok || !(zoom_from_ms >= 0) || !(zoom_to_ms > zoom_from_ms) || !std::isfinite(zoom_to_ms)) {
      Print(stderr, QStringLiteral("trainsim-gui: --zoom: '%1' is not FROM_MS:TO_MS with 0 <= FROM_MS < TO_MS").arg(parser.value(zoom)));
      return 2;
    }
  }
  int invalid = 0;  // the worst exit status of the configurations' errors: 2 bad input, 1 a run the hardware cannot do
  for (const auto& c : window.configurations()) {
    const QString msg = trainsim::gui::ValidationMessage(c);
    if (!msg.isEmpty()) {
      Print(stderr, msg);
      invalid = std::max(invalid, trainsim::gui::ValidationExitStatus(c));
    }
  }
  if (invalid) return invalid;
  if (window.configurations().empty()) {
    Print(stderr, QStringLiteral("trainsim-gui: --screenshot: no scenario to run"));
    return 2;
  }

  // Lay the window out so that the comparison view gets the requested size.
  const bool whole_window = parser.isSet(whole);
  window.SetConfigurationPanelVisible(whole_window);
  const QSize target(width_px, height_px);
  window.resize(target);
  window.show();
  QApplication::processEvents();
  if (!whole_window) window.resize(target + (window.size() - window.view()->size()));
  QApplication::processEvents();

  QEventLoop loop;
  QObject::connect(window.runner(), &trainsim::gui::ComparisonRunner::finished, &loop, &QEventLoop::quit);
  window.Run();
  if (window.runner()->IsRunning()) loop.exec();
  window.view()->ShowDetailsOf(0);
  QApplication::processEvents();

  const QString out = parser.value(shot);
  QWidget* target_widget = whole_window ? static_cast<QWidget*>(&window) : window.view();
  if (parser.isSet(panel)) {
    QWidget* p = window.view()->Panel(parser.value(panel));
    if (!p) {
      Print(stderr, QStringLiteral("trainsim-gui: --panel: '%1' is not one of: %2")
                        .arg(parser.value(panel), window.view()->PanelNames().join(QStringLiteral(", "))));
      return 2;
    }
    // Out of the grid, at the requested size: a panel read on its own.
    p->setParent(nullptr);
    p->resize(target);
    p->show();
    QApplication::processEvents();
    if (parser.isSet(zoom)) {
      if (p != window.view()->gantt()) {
        Print(stderr, QStringLiteral("trainsim-gui: --zoom FROM_MS:TO_MS goes with --panel timeline"));
        return 2;
      }
      const double step_ms = window.view()->gantt()->stepSeconds() * 1e3;
      if (zoom_from_ms >= step_ms) {
        Print(stderr, QStringLiteral("trainsim-gui: --zoom: the window starts at %1 ms, after the step's end (%2 ms)")
                          .arg(zoom_from_ms).arg(step_ms, 0, 'f', 1));
        return 2;
      }
      window.view()->gantt()->SetView(zoom_from_ms / 1e3, zoom_to_ms / 1e3);
      QApplication::processEvents();
    }
    target_widget = p;
  }
  if (parser.isSet(grab)) {
    // What the window system composed: catches what a render of the widget
    // tree would not (window decorations aside), e.g. native styling, fonts.
    target_widget->raise();
    target_widget->activateWindow();
    for (int i = 0; i < 10; ++i) {
      QApplication::processEvents();
      QThread::msleep(50);
    }
    QScreen* screen = target_widget->screen();
    const QPoint at = target_widget->mapToGlobal(QPoint(0, 0));
    const QPixmap shot_pixmap = screen ? screen->grabWindow(0, at.x(), at.y(), target_widget->width(), target_widget->height()) : QPixmap();
    if (shot_pixmap.isNull() || !shot_pixmap.save(out, "PNG")) {
      Print(stderr, out + QStringLiteral(": cannot grab the display (is there one? QT_QPA_PLATFORM=xcb under Xvfb)"));
      return 1;
    }
  } else if (!trainsim::gui::ExportPng(target_widget, out, image_scale)) {
    Print(stderr, out + QStringLiteral(": cannot write"));
    return 1;
  }
  Print(stdout, QStringLiteral("wrote %1 (%2x%3 view, %4 configuration%5)")
                    .arg(out)
                    .arg(target_widget->width())
                    .arg(target_widget->height())
                    .arg(window.configurations().size())
                    .arg(window.configurations().size() == 1 ? QString() : QStringLiteral("s")));
  if (target_widget->size() != target) {
    Print(stderr, QStringLiteral("trainsim-gui: --size %1x%2: the view's layout needs %3x%4; rendered at that")
                      .arg(width_px).arg(height_px).arg(target_widget->width()).arg(target_widget->height()));
  }
  // As `trainsim run`: a configuration the hardware cannot run (it does not
  // fit) is drawn as such, and the exit status says so.
  int status = 0;
  for (const auto& o : window.runner()->outcomes()) {
    if (o.ran() && !o.result.error.empty()) {
      Print(stderr, o.name + QStringLiteral(": ") + QString::fromStdString(o.result.error));
      status = 1;
    }
  }
  return status;
}
