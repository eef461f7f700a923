#pragma once
// A minimal SVG line chart writer (no dependency): panels side by side sharing categorical x
// positions (e.g. the concurrency levels), each with a linear y axis from 0, grid lines, labelled
// ticks and one polyline with point markers per series.
#include <string>
#include <vector>

namespace lathe::app {

struct PlotSeries {
  std::string label;
  std::vector<double> y;  // one value per x label; non-finite values are skipped
};

struct PlotPanel {
  std::string title;
  std::string y_label;
  std::vector<PlotSeries> series;
};

std::string render_svg_chart(const std::string& title, const std::string& x_label,
                             const std::vector<std::string>& x_labels, const std::vector<PlotPanel>& panels);

// A "nice" axis maximum >= value (1, 2, 2.5 or 5 times a power of ten); 1 for value <= 0.
double nice_axis_max(double value);

}  // namespace lathe::app
