// Drawing a memory plan as SVG.
#include "plan_svg.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace graft::cli {
namespace {

constexpr double kWidth = 1200, kHeight = 640;
constexpr double kLeft = 90, kRight = 30, kTop = 50, kBottom = 60;

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / 1048576.0); }

}  // namespace

std::string plan_svg(const Graph& g, const Liveness& l, const MemoryPlan& plan, const std::string& title) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const double steps = static_cast<double>(std::max<std::size_t>(l.steps.size(), 1));
  const double top = static_cast<double>(std::max<std::uint64_t>({plan.arena, plan.lower_bound, 1}));
  auto x = [&](double step) { return kLeft + step / steps * plot_w; };
  auto y = [&](double address) { return kTop + plot_h - address / top * plot_h; };
  std::string s;
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      kWidth, kHeight);
  s += fmt::format("<title>{}</title>\n", escape(title));
  s += fmt::format("<rect class=\"background\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", kWidth,
                   kHeight);
  s += fmt::format(
      "<text class=\"heading\" x=\"{}\" y=\"22\" font-size=\"15\">{}: arena {}, lower bound {} ({:.2f}% "
      "above), planner {}</text>\n",
      kLeft, escape(title), mib(plan.arena), mib(plan.lower_bound), plan.gap_percent(), planner_name(plan.planner));
  s += fmt::format(
      "<g class=\"plot\" data-left=\"{}\" data-top=\"{}\" data-width=\"{}\" data-height=\"{}\" "
      "data-steps=\"{}\" data-bytes=\"{}\">\n",
      kLeft, kTop, plot_w, plot_h, l.steps.size(), static_cast<std::uint64_t>(top));
  s += fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f7f7f7\" "
      "stroke=\"#999\"/>\n",
      kLeft, kTop, plot_w, plot_h);
  for (std::uint32_t b = 0; b < l.buffers.size(); ++b) {
    const Buffer& buf = l.buffers[b];
    if (!buf.planned || buf.bytes == 0 || plan.offsets[b] == kNotPlanned) continue;
    const std::string& node = g.name(buf.node);
    const std::string label = buf.element == 0 ? node : fmt::format("{}[{}]", node, buf.element);
    const double x0 = x(buf.first), x1 = x(buf.last + 1.0);
    const double y0 = y(static_cast<double>(plan.offsets[b] + buf.bytes)), y1 = y(static_cast<double>(plan.offsets[b]));
    const unsigned hue = (b * 137U) % 360U;  // neighbours get distant hues
    s += fmt::format(
        "<rect class=\"tensor\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"hsl({},60%,{}%)\" "
        "stroke=\"#333\" stroke-width=\"0.3\" data-node=\"{}\" data-bytes=\"{}\" data-offset=\"{}\" data-first=\"{}\" "
        "data-last=\"{}\" data-kind=\"{}\"><title>{}: {} bytes ({}), steps {}-{}, offset {}</title></rect>\n",
        x0, y0, x1 - x0, y1 - y0, hue, buf.kind == BufferKind::Output ? 45 : 70, escape(label), buf.bytes,
        plan.offsets[b], buf.first, buf.last, buffer_kind_name(buf.kind), escape(label), buf.bytes, mib(buf.bytes),
        buf.first, buf.last, plan.offsets[b]);
  }
  const double lb = y(static_cast<double>(plan.lower_bound)), arena = y(static_cast<double>(plan.arena));
  s += fmt::format(
      "<line class=\"arena\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\" stroke=\"#1f4e9c\" "
      "stroke-width=\"1.5\" data-bytes=\"{3}\"/>\n",
      kLeft, kLeft + plot_w, arena, plan.arena);
  s += fmt::format(
      "<line class=\"lower-bound\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\" stroke=\"#c0392b\" "
      "stroke-width=\"1.5\" stroke-dasharray=\"6 4\" data-bytes=\"{3}\"/>\n",
      kLeft, kLeft + plot_w, lb, plan.lower_bound);
  const double px = x(plan.peak_step + 0.5);
  const std::string peak_node = plan.peak_step < l.steps.size() ? g.name(l.steps[plan.peak_step]) : std::string();
  s += fmt::format(
      "<line class=\"peak\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#c0392b\" "
      "stroke-width=\"1\" data-step=\"{3}\" data-node=\"{4}\"><title>peak: step {3} ({4})</title></line>\n",
      px, kTop, kTop + plot_h, plan.peak_step, escape(peak_node));
  s += "</g>\n";
  s += fmt::format(
      "<text class=\"label-lower-bound\" x=\"{}\" y=\"{:.2f}\" fill=\"#c0392b\" text-anchor=\"end\">lower "
      "bound {}</text>\n",
      kLeft + plot_w, lb - 4, mib(plan.lower_bound));
  s += fmt::format(
      "<text class=\"label-peak\" x=\"{:.2f}\" y=\"{}\" fill=\"#c0392b\" text-anchor=\"middle\">peak: step "
      "{} ({})</text>\n",
      px, kTop - 6, plan.peak_step, escape(peak_node));
  for (int i = 0; i <= 4; ++i) {  // address ticks
    const double address = top * i / 4;
    s += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.2f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                     y(address) + 4, mib(static_cast<std::uint64_t>(address)));
  }
  s += fmt::format(
      "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">step (nodes in graph order, 0-{})"
      "</text>\n",
      kLeft + plot_w / 2, kHeight - 20, l.steps.empty() ? 0 : l.steps.size() - 1);
  s += fmt::format(
      "<text class=\"axis\" transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">arena "
      "address</text>\n",
      kTop + plot_h / 2);
  s += "</svg>\n";
  return s;
}

}  // namespace graft::cli
