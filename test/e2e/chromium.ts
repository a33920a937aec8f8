/** Debian's Chromium for page tests (see /work/shared/ops/browser-tests-here.md), launched once per suite. */
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, and kept from reaching for the network it does not have. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Records every text a canvas draws (call before the page loads): `timeAxisLabelsCut` and `priceScale` read them
 * back. A label's box is known from where it was drawn, its alignment and its measured extent, not guessed from
 * pixels; boxes are in CSS pixels whatever coordinate space the library drew in. A canvas painted over whole
 * (the library's background fill, or a clear) starts a new frame: what is kept is what the canvas shows now.
 */
export async function recordCanvasText(context: BrowserContext): Promise<void> {
  await context.addInitScript(`(() => {
    const drawn = (window.__canvasText = []);
    const newFrame = (ctx, x, y, w, h) => {
      const t = ctx.getTransform();
      const right = t.a * (x + w) + t.e;
      const bottom = t.d * (y + h) + t.f;
      if (t.a * x + t.e <= 0 && t.d * y + t.f <= 0 && right >= ctx.canvas.width && bottom >= ctx.canvas.height)
        for (let i = drawn.length - 1; i >= 0; i--) if (drawn[i].canvas === ctx.canvas) drawn.splice(i, 1);
    };
    const proto = CanvasRenderingContext2D.prototype;
    const { fillText, fillRect, clearRect } = proto;
    proto.clearRect = function (x, y, w, h) {
      newFrame(this, x, y, w, h);
      return clearRect.call(this, x, y, w, h);
    };
    proto.fillRect = function (x, y, w, h) {
      if (this.globalCompositeOperation === 'copy') newFrame(this, x, y, w, h);
      return fillRect.call(this, x, y, w, h);
    };
    proto.fillText = function (text, x, y, ...rest) {
      const m = this.measureText(text);
      const left = this.textAlign === 'center' ? x - m.width / 2 : this.textAlign === 'right' || this.textAlign === 'end' ? x - m.width : x;
      const t = this.getTransform();
      const ratio = window.devicePixelRatio || 1;
      const px = (v) => (t.a * v + t.e) / ratio;
      const py = (v) => (t.d * v + t.f) / ratio;
      drawn.push({
        canvas: this.canvas,
        text: String(text),
        left: px(left),
        right: px(left + m.width),
        y: py(y),
        top: py(y - m.actualBoundingBoxAscent),
        bottom: py(y + m.actualBoundingBoxDescent),
      });
      return fillText.call(this, text, x, y, ...rest);
    };
  })()`);
}

/** How far the document is wider than the window (0: nothing to scroll sideways). */
export const sidewaysOverflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/** A text drawn on a time axis, its left and right edges in CSS pixels. */
interface AxisText {
  text: string;
  left: number;
  right: number;
}

/**
 * The labels a Lightweight Charts chart inside `selector` shows on its time axis now, left to right, and the
 * axis's width (the page opened in a context given to `recordCanvasText`).
 */
export async function timeAxis(page: Page, selector: string): Promise<{ width: number; labels: AxisText[] }> {
  // Strings: the test project has no DOM types.
  const canvas = `(() => {
    const rows = document.querySelectorAll(${JSON.stringify(`${selector} table > tr`)});
    return rows[rows.length - 1]?.children[1]?.querySelector('canvas');
  })()`;
  // The library draws on an animation frame after the canvas exists: on a loaded machine the first labels may
  // come later than the page's load. Wait for them (bounded); the read below says what is missing if none came.
  await page
    .waitForFunction(
      `(() => { const c = ${canvas}; return !!c && window.__canvasText.some((t) => t.canvas === c); })()`,
      undefined,
      {
        timeout: 10_000,
      },
    )
    .catch(() => undefined);
  return page.evaluate(`(() => {
    const canvas = ${canvas};
    if (!canvas) throw new Error('no time axis in ' + ${JSON.stringify(selector)});
    const labels = window.__canvasText
      .filter((t) => t.canvas === canvas)
      .map((t) => ({ text: t.text, left: t.left, right: t.right }))
      .sort((a, b) => a.left - b.left);
    if (labels.length === 0) throw new Error('no time label drawn in ' + ${JSON.stringify(selector)});
    return { width: canvas.clientWidth, labels };
  })()`);
}

/**
 * The time labels a Lightweight Charts chart inside `selector` drew reaching past its time axis's edges: none,
 * when the library keeps the first and last label inside.
 */
export async function timeAxisLabelsCut(page: Page, selector: string): Promise<string[]> {
  const { width, labels } = await timeAxis(page, selector);
  return labels
    .filter((t) => t.left < -0.5 || t.right > width + 0.5)
    .map((t) => `${t.text} at ${t.left.toFixed(1)}..${t.right.toFixed(1)} of 0..${width}`);
}

/**
 * The labels a Lightweight Charts chart inside `selector` shows on its (first pane's) right price scale now, top
 * to bottom (see `priceScale`). A price line's label outside the scale's range is not among them.
 */
export async function priceAxisLabels(page: Page, selector: string): Promise<string[]> {
  return [...new Set((await priceScale(page, selector)).texts.map((t) => t.text))];
}

/** A text drawn on a price scale, its box in CSS pixels from the scale's top. */
export interface ScaleText {
  text: string;
  top: number;
  bottom: number;
}

/**
 * What a Lightweight Charts chart inside `selector` shows on the right price scale of its pane `pane` (0: the first)
 * now: the scale's height and every text drawn on it inside that height, top to bottom (the page opened in a context
 * given to `recordCanvasText`).
 */
export function priceScale(page: Page, selector: string, pane = 0): Promise<{ height: number; texts: ScaleText[] }> {
  return page.evaluate(`(() => {
    // Each pane is a row of three cells (left scale, pane, right scale); separators are rows of one; the time axis last.
    const rows = [...document.querySelectorAll(${JSON.stringify(`${selector} table > tr`)})].filter((tr) => tr.children.length === 3);
    const cell = rows.slice(0, -1)[${pane}]?.children[2];
    if (!cell) throw new Error('no price scale in ' + ${JSON.stringify(selector)} + ' pane ' + ${pane});
    const canvases = [...cell.querySelectorAll('canvas')];
    const height = cell.clientHeight;
    const texts = window.__canvasText
      .filter((t) => canvases.includes(t.canvas) && t.bottom >= 0 && t.top <= height)
      .map((t) => ({ text: t.text, top: t.top, bottom: t.bottom }))
      .sort((a, b) => a.top - b.top);
    return { height, texts };
  })()`);
}

/**
 * What overflows its box on the page now, hidden: an element wider inside than it shows (scrollWidth over
 * clientWidth), other than a chart's own canvases and a table that scrolls sideways under a visible hint that it
 * does (`.table-wrap` after a shown `.scroll-hint`). Empty when nothing is cut without a hint.
 */
export function hiddenOverflow(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const out = [];
    for (const e of document.querySelectorAll('body *')) {
      if (e.closest('.tv-lightweight-charts') || e.tagName === 'CANVAS') continue;
      if (e.scrollWidth <= e.clientWidth + 1 || e.clientWidth === 0) continue;
      const style = getComputedStyle(e);
      if (style.overflowX === 'visible' && e.getBoundingClientRect().right <= document.documentElement.clientWidth + 1) continue;
      const hint = e.previousElementSibling;
      if (e.classList.contains('table-wrap') && hint && hint.classList.contains('scroll-hint') && !hint.hidden && hint.offsetHeight > 0) continue;
      out.push((e.id ? '#' + e.id : e.tagName.toLowerCase() + '.' + [...e.classList].join('.')) + ' ' + e.scrollWidth + '>' + e.clientWidth);
    }
    return out;
  })()`);
}

/**
 * Where a chart's time axis puts the times it names: each label read as a time (an hour `14:00` of the current day,
 * a day `9` of `from`'s month at midnight), with its centre in CSS pixels, left to right; labels a fixed edge
 * shifted inside the axis (touching either end) are left out.
 */
export async function timeAxisTimes(
  page: Page,
  selector: string,
  from: number,
): Promise<{ time: number; x: number; text: string }[]> {
  const { width, labels } = await timeAxis(page, selector);
  const start = new Date(from);
  let day = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  let previous = -Infinity;
  const out: { time: number; x: number; text: string }[] = [];
  for (const l of labels) {
    let time: number;
    if (/^\d{2}:\d{2}$/.test(l.text)) {
      const [h, m] = l.text.split(':').map(Number) as [number, number];
      time = day + (h * 60 + m) * 60_000;
      if (time < previous) time += 86_400_000;
    } else if (/^\d{1,2}$/.test(l.text)) {
      time = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), Number(l.text));
      if (time < previous) continue;
    } else continue;
    day = time - (time % 86_400_000);
    previous = time;
    if (l.left > 1 && l.right < width - 1) out.push({ time, x: (l.left + l.right) / 2, text: l.text });
  }
  return out;
}

/**
 * What is wrong with a price scale (empty when nothing): a text on it that is not one of its own figures, a figure
 * cut at the scale's top or bottom edge, figures
 * not evenly spaced (a label at an order's price among them), two texts overlapping (one covers the other), or a
 * price in `within` outside the range the scale shows (read from where its figures are drawn: the scale is
 * linear).
 */
export function scaleProblems(
  scale: { height: number; texts: ScaleText[] },
  within: number[],
  minFigures = 3,
): string[] {
  const problems: string[] = [];
  const figures = scale.texts.map((t) => ({
    ...t,
    value: Number(t.text.replace(/,/g, '').replace('−', '-')),
    y: (t.top + t.bottom) / 2,
  }));
  for (const f of figures) if (!/^[-−]?[\d,]+(\.\d+)?$/.test(f.text)) problems.push(`not a figure: ${f.text}`);
  for (const f of figures)
    if (f.top < 0 || f.bottom > scale.height)
      problems.push(`${f.text} cut at the scale's edge (${f.top}..${f.bottom})`);
  for (let k = 1; k < figures.length; k++) {
    const [a, b] = [figures[k - 1]!, figures[k]!];
    // Two pixels: the padding of a label's box around its text.
    if (a.bottom + 2 > b.top) problems.push(`${b.text} covers ${a.text}`);
  }
  if (figures.length < minFigures) return [...problems, `only ${figures.length} figures on the scale`];
  if (figures.length < 2) return problems;
  const steps = figures.slice(1).map((f, k) => figures[k]!.value - f.value);
  const step = steps[0]!;
  if (steps.some((s) => Math.abs(s - step) > Math.abs(step) * 1e-6))
    problems.push(`figures not evenly spaced: ${figures.map((f) => f.text).join(' ')}`);
  const [first, last] = [figures[0]!, figures[figures.length - 1]!];
  const at = (y: number) => first.value + ((y - first.y) * (last.value - first.value)) / (last.y - first.y);
  const [low, high] = [at(scale.height), at(0)];
  for (const p of within) if (!(p > low && p < high)) problems.push(`${p} outside the scale's ${low}..${high}`);
  return problems;
}
