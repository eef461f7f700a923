// The dependency-free SVG chart: structure (panels, one polyline per series with one point per
// finite value), axis maxima, escaping.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/bench_plot.h"

namespace lathe::app {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(BenchPlot, NiceAxisMaxima) {
  EXPECT_DOUBLE_EQ(nice_axis_max(0.9), 1.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(1.0), 1.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(1.2), 2.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(2.1), 2.5);
  EXPECT_DOUBLE_EQ(nice_axis_max(3.0), 5.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(7.0), 10.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(1234.0), 2000.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(0.0031), 0.005);
  EXPECT_DOUBLE_EQ(nice_axis_max(0.0), 1.0);
  EXPECT_DOUBLE_EQ(nice_axis_max(NAN), 1.0);
}

TEST(BenchPlot, PanelsSeriesAndPoints) {
  const std::string svg = render_svg_chart(
      "model <a&b>", "concurrency", {"1", "4", "16", "64"},
      {PlotPanel{"Output throughput", "tokens / s", {PlotSeries{"tok/s", {10, 35, 120, 300}}}},
       PlotPanel{"TPOT", "ms", {PlotSeries{"mean", {5, 6, 7, 9}}, PlotSeries{"p99", {6, NAN, 9, 12}}}}});
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<g class=\"panel\">"), 2u);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_EQ(count(svg, "<circle"), 4u + 4u + 3u);  // the NaN point is skipped
  EXPECT_NE(svg.find("model &lt;a&amp;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
  EXPECT_NE(svg.find(">64<"), std::string::npos);
  // The throughput axis ends at nice_axis_max(300 * 1.05) = 500 (ticks every 100).
  EXPECT_NE(svg.find(">500<"), std::string::npos);
  EXPECT_NE(svg.find("<title>tok/s: 300</title>"), std::string::npos);  // tooltips carry the values
}

TEST(BenchPlot, OnePointAndEmptyPanels) {
  const std::string svg = render_svg_chart("t", "x", {"8"}, {PlotPanel{"p", "y", {PlotSeries{"s", {2.0}}}}});
  EXPECT_EQ(count(svg, "<circle"), 1u);
  const std::string empty = render_svg_chart("t", "x", {}, {});
  EXPECT_EQ(empty.substr(empty.size() - 7), "</svg>\n");
}

}  // namespace
}  // namespace lathe::app
