// Keeps the reader's course progress in their own browser (ui/browser_progress.py, issue 45).
// Loaded once per page by the component's small inline script. localStorage, under the course's own
// key, holds {version, done: [lesson slugs]}; nothing goes to the server but what this browser reports.
//
// - Once per session (the server's token in `data.session`): what the browser holds that the session
//   does not know yet is reported to Python as the trigger "stored", so a reload or a visit next week
//   starts where the reader left off.
// - On every call: the session's progress is added to what is stored (never removed), so a report not
//   yet merged, or another tab, loses nothing; only a clear (`data.clears` went up) replaces it.

const reported = new Set(); // sessions this page has reported to
const clearsSeen = new Map(); // session → the clear count last written

function stored(key) {
  try {
    const record = JSON.parse(window.localStorage.getItem(key) ?? "null");
    const done = Array.isArray(record?.done) ? record.done : [];
    return done.filter((slug) => typeof slug === "string");
  } catch {
    return []; // storage switched off or unreadable: nothing kept
  }
}

function store(key, record) {
  try {
    window.localStorage.setItem(key, JSON.stringify(record));
  } catch {
    // storage switched off or full: progress lasts this session only
  }
}

const same = (a, b) => a.length === b.length && a.every((slug) => b.includes(slug));

// The component's entry (components v2): `data` = {key, record: {version, done}, clears, session}.
export function keep({ data, setTriggerValue }) {
  const { key, record, clears, session } = data;
  const kept = stored(key);
  const known = record.done;
  if (!reported.has(session)) {
    reported.add(session);
    clearsSeen.set(session, clears);
    if (kept.some((slug) => !known.includes(slug))) {
      setTriggerValue("stored", { version: record.version, done: kept });
    }
  }
  let next = [...new Set([...kept, ...known])].sort();
  if (clearsSeen.get(session) !== clears) {
    clearsSeen.set(session, clears);
    next = [...known].sort(); // the reader cleared their progress: what the session holds now
  }
  if (!same(next, kept)) store(key, { ...record, done: next });
}
