// Draws the plotly charts of ui/live_chart.py (issue 29): one chart per element, patched in place.
// Loaded once per page by each chart element's small inline script (import() of this module).
// A later figure for the same element goes to Plotly.react on the SAME node: plotly redraws only
// what changed, where st.plotly_chart would unmount the chart and draw it again from scratch.
// A chart off screen is drawn when it comes near the screen: a Step that changes five charts
// draws the one or two the reader can see, and the others when the reader scrolls to them.

const BUNDLE = new URL("plotly/plotly-cartesian-4.1.1.min.js", import.meta.url).href;
const CONFIG = { displayModeBar: false, responsive: false }; // width: the ResizeObserver below
// How near the visible part of the page a chart is drawn: a scroll reaches it after its drawing
// (20-50 ms) has begun, so the reader does not see it change.
const NEAR = "200px 0px";

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

// -- in view or not: one IntersectionObserver per scrolling pane (Streamlit scrolls its main pane,
// not the window, and a margin applies only to the observer's own root)

const observers = new Map();

function scrollingPane(node) {
  for (let el = node.parentElement; el; el = el.parentElement) {
    const overflow = getComputedStyle(el).overflowY;
    if (overflow === "auto" || overflow === "scroll") return el;
  }
  return null; // the window
}

function watchView(plot) {
  const pane = scrollingPane(plot);
  let observer = observers.get(pane);
  if (!observer) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          entry.target.courseNear = entry.isIntersecting;
          if (entry.isIntersecting) drawWaiting(entry.target);
        }
      },
      { root: pane, rootMargin: NEAR },
    );
    observers.set(pane, observer);
  }
  plot.courseView = observer;
  observer.observe(plot); // its first report comes within a frame, and draws the chart if near
}

// Printing shows every chart: the ones still waiting are drawn first (tests use the same path).
window.addEventListener("beforeprint", () => {
  for (const plot of document.querySelectorAll(".course-chart")) drawWaiting(plot, true);
});

// -- drawing

// Redraw at the column's width when it changes (window resize, sidebar opened or closed). Only the
// width: the observer also fires when a redraw changes the node's height, and a resize then would
// lay the whole chart out again for nothing on every Step. A chart off screen resizes when it is near.
function watchWidth(plot, Plotly) {
  if (plot.courseWatch) return;
  let frame = 0;
  plot.courseWidth = Math.round(plot.getBoundingClientRect().width);
  plot.courseWatch = new ResizeObserver((entries) => {
    const width = Math.round(entries[entries.length - 1].contentRect.width);
    if (width === plot.courseWidth) return;
    plot.courseWidth = width;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      if (!plot.isConnected) return;
      if (plot.courseNear) Plotly.Plots.resize(plot);
      else plot.courseResize = true;
    });
  });
  plot.courseWatch.observe(plot);
}

// The state a test can read: data-course-state is "waiting" (a figure not drawn yet: the chart is
// off screen), "drawing" or "drawn" (the newest figure is on screen).
function drawWaiting(plot, always = false) {
  const figure = plot.courseWaiting;
  if (!figure) {
    if (plot.courseResize && (plot.courseNear || always) && window.Plotly) {
      plot.courseResize = false;
      window.Plotly.Plots.resize(plot);
    }
    return;
  }
  if (!(plot.courseNear || always)) return;
  plot.courseWaiting = undefined;
  plot.courseResize = false;
  plot.dataset.courseState = "drawing";
  const ticket = (plot.courseTicket = (plot.courseTicket || 0) + 1);
  const draw = (Plotly) => {
    if (ticket !== plot.courseTicket) return; // a newer figure came while plotly.js loaded
    return Plotly.react(plot, figure.data, figure.layout, CONFIG).then(() => {
      if (ticket === plot.courseTicket) plot.dataset.courseState = "drawn";
      watchWidth(plot, Plotly);
    });
  };
  // plotly.js already here: drawn at once (printing does not wait for a promise)
  const done = window.Plotly ? Promise.resolve(draw(window.Plotly)) : loadPlotly().then(draw);
  done.catch((error) => {
    plot.courseText = undefined; // not drawn: the same figure tries again
    plot.dataset.courseState = "waiting";
    console.error("course chart:", error);
  });
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
  plot.courseWaiting = figure;
  plot.dataset.courseState = "waiting";
  if (!plot.courseView) watchView(plot);
  else drawWaiting(plot);
  return () => release(plot);
}

// Streamlit calls an element's cleanup when the element goes, and also when a newer figure came
// before this call returned: the chart is let go only if its node has left the page.
function release(plot) {
  setTimeout(() => {
    if (plot.isConnected) return;
    plot.courseWatch?.disconnect();
    plot.courseView?.unobserve(plot);
    window.Plotly?.purge(plot);
  });
}
