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
export function timeAxis(page: Page, selector: string): Promise<{ width: number; labels: AxisText[] }> {
  // A string: the test project has no DOM types.
  return page.evaluate(`(() => {
    const rows = document.querySelectorAll(${JSON.stringify(`${selector} table > tr`)});
    const canvas = rows[rows.length - 1]?.children[1]?.querySelector('canvas');
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
 * What a Lightweight Charts chart inside `selector` shows on its (first pane's) right price scale now: the scale's
 * height and every text drawn on it inside that height, top to bottom (the page opened in a context given to
 * `recordCanvasText`).
 */
export function priceScale(page: Page, selector: string): Promise<{ height: number; texts: ScaleText[] }> {
  return page.evaluate(`(() => {
    const cell = document.querySelector(${JSON.stringify(`${selector} table > tr:first-child > td:nth-child(3)`)});
    if (!cell) throw new Error('no price scale in ' + ${JSON.stringify(selector)});
    const canvases = [...cell.querySelectorAll('canvas')];
    const height = cell.clientHeight;
    const texts = window.__canvasText
      .filter((t) => canvases.includes(t.canvas) && t.bottom >= 0 && t.top <= height)
      .map((t) => ({ text: t.text, top: t.top, bottom: t.bottom }))
      .sort((a, b) => a.top - b.top);
    return { height, texts };
  })()`);
}
