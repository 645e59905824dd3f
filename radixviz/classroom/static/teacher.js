// The class report stays live on a projector: every few seconds its table is fetched again
// and put in place, unless the teacher has a row's menu open (a link shown, a button near).
const EVERY_MS = 10000;
setInterval(async () => {
  if (document.hidden || document.querySelector("details[open]")) return;
  try {
    const response = await fetch("/teacher", {credentials: "same-origin", cache: "no-store"});
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const selector of ["table.students tbody", "#counts"]) {
      const mine = document.querySelector(selector), theirs = fresh.querySelector(selector);
      if (mine && theirs) mine.replaceWith(theirs);
    }
  } catch (error) {
    // the server is restarting: the next round tries again
  }
}, EVERY_MS);
