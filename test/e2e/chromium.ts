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
 * Records every text a canvas draws (call before the page loads): `timeAxisLabelsCut` reads them back. A label's
 * box is known from where it was drawn, its alignment and its measured width, not guessed from pixels.
 */
export async function recordCanvasText(context: BrowserContext): Promise<void> {
  await context.addInitScript(`(() => {
    const drawn = (window.__canvasText = []);
    const fillText = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
      const width = this.measureText(text).width;
      const left = this.textAlign === 'center' ? x - width / 2 : this.textAlign === 'right' || this.textAlign === 'end' ? x - width : x;
      const t = this.getTransform();
      drawn.push({ canvas: this.canvas, text: String(text), left, right: left + width, y: (t.d * y + t.f) / (window.devicePixelRatio || 1) });
      return fillText.call(this, text, x, y, ...rest);
    };
  })()`);
}

/**
 * The time labels a Lightweight Charts chart inside `selector` drew reaching past its time axis's edges (the
 * page opened in a context given to `recordCanvasText`): none, when the library keeps the first and last label
 * inside. Positions are in CSS pixels, as the library draws its labels.
 */
export function timeAxisLabelsCut(page: Page, selector: string): Promise<string[]> {
  // A string: the test project has no DOM types.
  return page.evaluate(`(() => {
    const rows = document.querySelectorAll(${JSON.stringify(`${selector} table > tr`)});
    const canvas = rows[rows.length - 1]?.children[1]?.querySelector('canvas');
    if (!canvas) throw new Error('no time axis in ' + ${JSON.stringify(selector)});
    const labels = window.__canvasText.filter((t) => t.canvas === canvas);
    if (labels.length === 0) throw new Error('no time label drawn in ' + ${JSON.stringify(selector)});
    const width = canvas.clientWidth;
    return labels
      .filter((t) => t.left < -0.5 || t.right > width + 0.5)
      .map((t) => t.text + ' at ' + t.left.toFixed(1) + '..' + t.right.toFixed(1) + ' of 0..' + width);
  })()`);
}

/**
 * The labels a Lightweight Charts chart inside `selector` shows on its (first pane's) right price scale now: the
 * texts drawn on that scale's canvases inside its height (the page opened in a context given to
 * `recordCanvasText`). A price line's label outside the scale's range is not among them.
 */
export function priceAxisLabels(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const cell = document.querySelector(${JSON.stringify(`${selector} table > tr:first-child > td:nth-child(3)`)});
    if (!cell) throw new Error('no price scale in ' + ${JSON.stringify(selector)});
    const canvases = [...cell.querySelectorAll('canvas')];
    const height = cell.clientHeight;
    return [...new Set(window.__canvasText.filter((t) => canvases.includes(t.canvas) && t.y >= 0 && t.y <= height).map((t) => t.text))];
  })()`);
}
