// Draws the plotly charts of ui/live_chart.py (issue 29): one chart per element, patched in place.
// Loaded once per page by each chart element's small inline script (import() of this module).
// A later figure for the same element goes to Plotly.react on the SAME node: plotly redraws only
// what changed, where st.plotly_chart would unmount the chart and draw it again from scratch.

const BUNDLE = new URL("plotly/plotly-cartesian-4.1.1.min.js", import.meta.url).href;
const CONFIG = { displayModeBar: false, responsive: false }; // width: the ResizeObserver below

let plotly; // one <script> for the page, whose promise every chart shares
function loadPlotly() {
  plotly ??= new Promise((ok, fail) => {
    const tag = document.createElement("script");
    tag.src = BUNDLE;
    tag.onload = () => ok(window.Plotly);
    tag.onerror = () => {
      plotly = undefined; // the next figure tries again
      fail(new Error(`plotly.js not loaded from ${BUNDLE}`));
    };
    document.head.appendChild(tag);
  });
  return plotly;
}

// Redraw at the column's width when it changes (window resize, sidebar opened or closed). Only the
// width: the observer also fires when a redraw changes the node's height, and a resize then would
// lay the whole chart out again for nothing on every Step.
function watchWidth(plot, Plotly) {
  if (plot.courseWatch) return;
  let frame = 0;
  plot.courseWidth = Math.round(plot.getBoundingClientRect().width);
  plot.courseWatch = new ResizeObserver((entries) => {
    const width = Math.round(entries[entries.length - 1].contentRect.width);
    if (width === plot.courseWidth) return;
    plot.courseWidth = width;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => plot.isConnected && Plotly.Plots.resize(plot));
  });
  plot.courseWatch.observe(plot);
}

// The component's entry (components v2): `data` is the figure's JSON as bytes, `parentElement`
// the element's own node, the same one on every rerun while the element stays on the page.
export function draw({ data, parentElement }) {
  let plot = parentElement.querySelector(":scope > .course-chart");
  if (!plot) {
    plot = document.createElement("div");
    plot.className = "course-chart";
    parentElement.appendChild(plot);
  }
  const text = new TextDecoder().decode(data);
  // Streamlit calls again for the same figure when anything else of the element changes (the
  // theme): left as drawn, since Plotly.react would recompute it all (its arrays are new objects)
  if (text === plot.courseText) return () => release(plot);
  plot.courseText = text;
  const figure = JSON.parse(text);
  plot.style.height = `${figure.layout?.height ?? 450}px`; // the figure's own height, as st.plotly_chart
  const ticket = (plot.courseTicket = (plot.courseTicket || 0) + 1);
  loadPlotly()
    .then((Plotly) => {
      if (ticket !== plot.courseTicket) return; // a newer figure came while plotly.js loaded
      return Plotly.react(plot, figure.data, figure.layout, CONFIG).then(() => watchWidth(plot, Plotly));
    })
    .catch((error) => {
      plot.courseText = undefined; // not drawn: the same figure tries again
      console.error("course chart:", error);
    });
  return () => release(plot);
}

// Streamlit calls an element's cleanup when the element goes, and also when a newer figure came
// before this call returned: the chart is let go only if its node has left the page.
function release(plot) {
  setTimeout(() => {
    if (plot.isConnected) return;
    plot.courseWatch?.disconnect();
    window.Plotly?.purge(plot);
  });
}
