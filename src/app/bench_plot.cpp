#include "app/bench_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace lathe::app {
namespace {

constexpr double kPanelWidth = 460.0;
constexpr double kPanelHeight = 340.0;
constexpr double kLeft = 70.0;     // room for y tick labels
constexpr double kRight = 20.0;
constexpr double kTop = 60.0;      // chart title + panel title
constexpr double kBottom = 70.0;   // x ticks, x label, legend
constexpr int kTicks = 5;
constexpr std::array<const char*, 6> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string tick_text(double value) {
  if (value == 0.0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1000.0) return fmt::format("{:.0f}", value);
  if (magnitude >= 10.0) return fmt::format("{:.4g}", value);
  return fmt::format("{:.3g}", value);
}

}  // namespace

double nice_axis_max(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return 1.0;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (step * power >= value * (1.0 - 1e-12)) return step * power;
  }
  return 10.0 * power;
}

std::string render_svg_chart(const std::string& title, const std::string& x_label,
                             const std::vector<std::string>& x_labels, const std::vector<PlotPanel>& panels) {
  const double width = kPanelWidth * static_cast<double>(std::max<size_t>(panels.size(), 1));
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{:.1f}\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
      width, kPanelHeight, width, kPanelHeight, width / 2.0, xml_escape(title));
  const size_t n = x_labels.size();
  for (size_t p = 0; p < panels.size(); ++p) {
    const PlotPanel& panel = panels[p];
    const double x0 = static_cast<double>(p) * kPanelWidth + kLeft;
    const double x1 = static_cast<double>(p + 1) * kPanelWidth - kRight;
    const double y0 = kPanelHeight - kBottom;  // axis baseline (value 0)
    const double y1 = kTop;                    // axis top (value ymax)
    double ymax = 0.0;
    for (const PlotSeries& s : panel.series) {
      for (double v : s.y) {
        if (std::isfinite(v)) ymax = std::max(ymax, v);
      }
    }
    ymax = nice_axis_max(ymax * 1.05);
    auto xpos = [&](size_t i) { return n <= 1 ? (x0 + x1) / 2.0 : x0 + (x1 - x0) * static_cast<double>(i) / static_cast<double>(n - 1); };
    auto ypos = [&](double v) { return y0 - (y0 - y1) * v / ymax; };

    svg += fmt::format("<g class=\"panel\">\n<text x=\"{:.1f}\" y=\"45\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                       (x0 + x1) / 2.0, xml_escape(panel.title));
    for (int t = 0; t <= kTicks; ++t) {
      const double v = ymax * t / kTicks;
      const double y = ypos(v);
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", x0, y, x1, y);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x0 - 6, y + 4, tick_text(v));
    }
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\"/>\n", x0, y0, x1);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n", x0, y0, y1);
    for (size_t i = 0; i < n; ++i) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", xpos(i), y0 + 16,
                         xml_escape(x_labels[i]));
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", (x0 + x1) / 2.0, y0 + 32,
                       xml_escape(x_label));
    svg += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                       x0 - 52, (y0 + y1) / 2.0, xml_escape(panel.y_label));
    for (size_t s = 0; s < panel.series.size(); ++s) {
      const PlotSeries& series = panel.series[s];
      const char* color = kColors[s % kColors.size()];
      std::string points;
      std::string markers;
      for (size_t i = 0; i < std::min(n, series.y.size()); ++i) {
        if (!std::isfinite(series.y[i])) continue;
        points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", xpos(i), ypos(series.y[i]));
        markers += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {}</title></circle>\n",
                               xpos(i), ypos(series.y[i]), color, xml_escape(series.label), tick_text(series.y[i]));
      }
      svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n{}", color, points, markers);
      const double lx = x0 + static_cast<double>(s) * 110.0;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"3\" fill=\"{}\"/>"
                         "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                         lx, y0 + 48, color, lx + 16, y0 + 53, xml_escape(series.label));
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace lathe::app
