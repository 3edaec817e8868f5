// The sidebar buttons. pydata-sphinx-theme 0.17.1 (pinned by sphinx-book-theme 1.3.0) binds its
// handlers to the *first* ".primary-toggle" and ".secondary-toggle" of a page, and the first is a
// hidden copy in the navbar: the visible buttons did nothing (pydata/pydata-sphinx-theme#2451).
// A click on any later copy is passed on to the first, which the themes handle.
document.addEventListener("DOMContentLoaded", () => {
  for (const selector of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...copies] = document.querySelectorAll(selector);
    for (const copy of copies) {
      copy.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        bound.click();
      });
    }
  }
});

// A plot is small on a phone: tapping it opens the image at its full size.
document.addEventListener("DOMContentLoaded", () => {
  for (const image of document.querySelectorAll(".cell_output img, article img[src$='.svg']")) {
    if (image.closest("a")) continue;
    const link = document.createElement("a");
    link.href = image.src;
    link.title = "open at full size";
    image.replaceWith(link);
    link.appendChild(image);
  }
});

// Search results quote a page's text, where a formula is still TeX ("\(\lambda\)"): show it as
// a reader would write it ("λ").
const TEX_SYMBOLS = {lambda: "λ", theta: "θ", gamma: "γ", beta: "β", rho: "ρ", tau: "τ",
                     sqrt: "√", cdot: "·", times: "×", le: "≤", ge: "≥", approx: "≈", pm: "±",
                     infty: "∞", sum: "Σ", ln: "ln", log: "log", exp: "exp", max: "max"};

function readableTex(text) {
  return text
    .replace(/\\[()[\]]|\$\$/g, "")
    .replace(/\\(?:mathrm|text|operatorname|mathbf)\{([^{}]*)\}/g, "$1")
    .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "($1)/($2)")
    .replace(/([_^])\{([^{}]*)\}/g, "$1$2")
    .replace(/\\([A-Za-z]+)/g, (whole, name) => TEX_SYMBOLS[name] ?? name)
    .replace(/\\[,;! ]/g, " ");
}

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const toText = Search.htmlToText;
  Search.htmlToText = (html, anchor) => readableTex(toText(html, anchor));
});

// A lesson outranks the exercise that shares its words (search for "temperature": lessons 7 and
// 10 before exercises 7 and 10).
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Scorer === "undefined") return;
  Scorer.score = ([docname, , , , score]) => score + (docname.startsWith("lessons/") ? 10 : 0);
});
