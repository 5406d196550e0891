// Accessibility and layout checks run inside a published page by tests/test_pages_in_browser.py
// (evaluated through the DevTools protocol, so the page's policy does not block them). The file is
// one expression: an object of functions, each returning facts or a list of problems (strings).
({
  // "rgb(1, 2, 3)" or "rgba(1, 2, 3, 0.5)" -> [r, g, b, alpha]
  rgba(css) {
    const parts = css.match(/[\d.]+/g).map(Number);
    return parts.length === 3 ? [...parts, 1] : parts;
  },

  // WCAG 2 relative luminance of [r, g, b] (0-255 each)
  luminance([r, g, b]) {
    const linear = (c) => (c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  },

  ratio(a, b) {
    const [high, low] = [this.luminance(a), this.luminance(b)].sort((x, y) => y - x);
    return (high + 0.05) / (low + 0.05);
  },

  // The colour behind an element: the first background of it or its ancestors that is not
  // transparent, blended over what lies behind it when it is translucent (the canvas is white).
  background(element) {
    if (!element) return [255, 255, 255, 1];
    const own = this.rgba(getComputedStyle(element).backgroundColor);
    if (own[3] === 0) return this.background(element.parentElement);
    if (own[3] === 1) return own;
    const under = this.background(element.parentElement);
    return [0, 1, 2].map((i) => own[i] * own[3] + under[i] * (1 - own[3])).concat(1);
  },

  describe(element) {
    const text = (element.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
    const classes = element.getAttribute("class");
    return `<${element.localName}${classes ? " class=" + classes : ""}> "${text}"`;
  },

  visible(element) {
    const style = getComputedStyle(element);
    return element.getClientRects().length > 0 && style.visibility !== "hidden"
      && !element.closest(".visually-hidden");
  },

  // Text contrast (WCAG 1.4.3: 4.5:1, 3:1 for large text), and links told apart from the text around
  // them (WCAG 1.4.1: underlined, or 3:1 against that text).
  contrast() {
    const problems = [];
    for (const element of document.body.querySelectorAll("*")) {
      const texts = [...element.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.data.trim());
      if (!texts.length || !this.visible(element)) continue;
      const style = getComputedStyle(element);
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      const ratio = this.ratio(this.rgba(style.color), this.background(element));
      if (ratio < (large ? 3 : 4.5)) {
        problems.push(`contrast ${ratio.toFixed(2)}:1 of ${style.color} on ${this.background(element)}: ${this.describe(element)}`);
      }
    }
    for (const link of document.body.querySelectorAll("a[href]")) {
      const block = link.parentElement;
      const inText = block.textContent.trim().length > link.textContent.trim().length + 3;
      const underlined = getComputedStyle(link).textDecorationLine.includes("underline");
      const apart = this.ratio(this.rgba(getComputedStyle(link).color), this.rgba(getComputedStyle(block).color));
      if (inText && !underlined && apart < 3) {
        problems.push(`link not underlined and ${apart.toFixed(2)}:1 against its text: ${this.describe(link)}`);
      }
    }
    return problems;
  },

  // Structure: language, title, images, links, headings, landmarks, forms, ids.
  structure() {
    const problems = [];
    if (!document.documentElement.lang) problems.push("no lang attribute on <html>");
    if (!document.title.trim()) problems.push("an empty <title>");
    if (!document.querySelector('meta[name="viewport"]')) problems.push("no viewport meta tag");
    for (const image of document.images) {
      if (!image.hasAttribute("alt")) problems.push(`an image without alt: ${image.getAttribute("src")}`);
    }
    for (const link of document.querySelectorAll("a[href]")) {
      const named = link.textContent.trim() || link.getAttribute("aria-label")
        || [...link.querySelectorAll("img[alt]")].some((image) => image.alt.trim());
      if (!named) problems.push(`a link without a name: ${link.getAttribute("href")}`);
    }
    const controls = document.querySelectorAll("form, input, select, textarea, button");
    if (controls.length) problems.push(`${controls.length} form elements`);
    // Headings the theme writes (the feeds' own, inside summaries, are theirs): one h1, no level skipped.
    const levels = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")]
      .filter((heading) => !heading.closest(".summary")).map((heading) => Number(heading.localName[1]));
    if (levels.filter((level) => level === 1).length !== 1 || levels[0] !== 1) {
      problems.push(`headings start with ${levels[0]} and hold ${levels.filter((l) => l === 1).length} h1`);
    }
    levels.forEach((level, i) => {
      if (i && level > levels[i - 1] + 1) problems.push(`heading level ${levels[i - 1]} followed by ${level}`);
    });
    // Landmarks: a banner, one main, a contentinfo, and no content outside a landmark.
    // More than one nav is fine when each other one is named (aria-label: "More entries").
    for (const selector of ["body > header", "main", "body > footer", "nav:not([aria-label])"]) {
      const found = document.querySelectorAll(selector).length;
      if (found !== 1) problems.push(`${found} elements match ${selector}`);
    }
    for (const aside of document.querySelectorAll("aside")) {
      const label = document.getElementById(aside.getAttribute("aria-labelledby") || "");
      if (!label || !label.textContent.trim()) problems.push("an <aside> without a label");
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (node.data.trim() && !node.parentElement.closest("header, nav, main, aside, footer")) {
        problems.push(`text outside every landmark: "${node.data.trim().slice(0, 40)}"`);
      }
    }
    const ids = [...document.querySelectorAll("[id]")].map((element) => element.id);
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (repeated.length) problems.push(`repeated ids: ${repeated.join(", ")}`);
    return problems;
  },

  // What the page loads and how it lays out.
  facts() {
    const sheets = [...document.styleSheets];
    let rules = null;  // a file: page may not read its style sheets' rules
    try { rules = sheets.flatMap((sheet) => [...sheet.cssRules]); } catch (error) { /* file: */ }
    const body = getComputedStyle(document.body);
    const zero = document.createElement("span");
    zero.textContent = "0".repeat(65);
    zero.style.cssText = "position: absolute; white-space: nowrap; visibility: hidden";
    const article = document.querySelector("article.entry");
    (article || document.body).append(zero);
    const measure = zero.getBoundingClientRect().width;
    zero.remove();
    const box = (selector) => {
      const element = document.querySelector(selector);
      return element && element.getBoundingClientRect().toJSON();
    };
    return {
      scripts: document.scripts.length,
      sheets: sheets.map((sheet) => sheet.href),
      font_faces: document.fonts.size,
      imports: rules && rules.filter((rule) => rule instanceof CSSImportRule).map((rule) => rule.href),
      scroll_width: document.documentElement.scrollWidth,
      viewport: innerWidth,
      time_lines: Math.max(0, ...[...document.querySelectorAll("time")].filter((t) => !t.closest("h2.day"))
        .map((time) => time.getClientRects().length)),
      background: this.rgba(body.backgroundColor),
      color: this.rgba(body.color),
      font_family: body.fontFamily,
      line_height: parseFloat(body.lineHeight) / parseFloat(body.fontSize),
      article_width: article ? article.getBoundingClientRect().width : null,
      measure_65ch: measure,
      main: box("main"),
      aside: box("aside"),
    };
  },

  // The focused element's outline: visible, and 3:1 against what is behind it (WCAG 2.4.7, 1.4.11).
  focus() {
    const element = document.activeElement;
    const style = getComputedStyle(element);
    return {
      element: element === document.body ? "body" : this.describe(element),
      outline: `${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}`,
      visible: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
      contrast: this.ratio(this.rgba(style.outlineColor), this.background(element.parentElement)),
    };
  },
})
