// The student's page around textual-serve's terminal. Loaded from this server (its
// Content-Security-Policy runs no inline script), before textual.js.

// a session the server refuses or ends says why on the closed card (the class is full, the
// app could not start, it went past its memory), whose button starts a new one
(() => {
  const Native = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    const socket = new Native(url, protocols);
    socket.addEventListener("close", (event) => {
      if (event.reason) document.querySelector(".closed-dialog .message").textContent = event.reason;
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {OPEN: 1, CLOSED: 3, CONNECTING: 0, CLOSING: 2});
})();

// the click that gives the terminal the focus only gives it the focus: it used to act as
// well, opening the lesson under the pointer, or the palette from the footer (issue 51)
(() => {
  let swallowing = false;
  const keys = () => document.querySelector(".xterm-helper-textarea");
  const stop = (event) => { event.preventDefault(); event.stopImmediatePropagation(); };
  window.addEventListener("mousedown", (event) => {
    swallowing = false;
    const area = keys();
    if (!area || !(event.target instanceof Element) || !event.target.closest("#terminal")) return;
    if (document.hasFocus() && document.activeElement === area) return;
    swallowing = true;
    stop(event);
    area.focus();
  }, true);
  for (const kind of ["mouseup", "click", "auxclick", "dblclick"]) {
    window.addEventListener(kind, (event) => {
      if (!swallowing) return;
      stop(event);
      if (kind !== "mouseup") swallowing = false;
    }, true);
  }
})();

document.addEventListener("DOMContentLoaded", () => {
  document.querySelector(".closed-dialog button").addEventListener("click", () => location.reload());
  document.querySelector("#upload input").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    const note = document.querySelector("#upload-note");
    const response = await fetch("/upload", {method: "POST", body: file,
      headers: {"X-File-Name": encodeURIComponent(file.name)}});
    note.textContent = await response.text();
    note.style.display = "block";
    setTimeout(() => { note.style.display = "none"; }, 6000);
    event.target.value = "";
  });
});
