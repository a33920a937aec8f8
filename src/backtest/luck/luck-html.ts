/** The luck section of sweep.html and hyperopt.html: the verdict, the bar the best had to clear, PBO's logits. */
import { escapeHtml } from '../report-html.js';
import type { LuckRecord } from './luck.js';

/** The logits' histogram as an inline SVG: bars left of zero (the in-sample best fell to or under the median) red. */
function logitChart(luck: LuckRecord): string {
  const bins = luck.logits;
  if (bins.length === 0) return '<p class="note">No logit to draw: PBO needs two trials and at least 16 returns.</p>';
  const W = 520;
  const H = 220;
  const m = { l: 44, r: 12, t: 12, b: 40 };
  const lo = Math.min(bins[0]!.from, -0.5);
  const hi = Math.max(bins[bins.length - 1]!.to, 0.5);
  const top = Math.max(...bins.map((b) => b.count));
  const sx = (v: number) => m.l + ((v - lo) / (hi - lo)) * (W - m.l - m.r);
  const sy = (c: number) => H - m.b - (c / top) * (H - m.t - m.b);
  const bars = bins
    .filter((b) => b.count > 0)
    .map(
      (b) =>
        `<rect x="${sx(b.from).toFixed(1)}" y="${sy(b.count).toFixed(1)}" width="${Math.max(1, sx(b.to) - sx(b.from) - 1).toFixed(1)}" height="${(H - m.b - sy(b.count)).toFixed(1)}" fill="${b.to <= 0 ? '#f23645' : '#089981'}"><title>${escapeHtml(`λ ${b.from} to ${b.to}: ${b.count} splits`)}</title></rect>`,
    )
    .join('');
  const ticks = [lo, 0, hi]
    .map(
      (v) =>
        `<line x1="${sx(v)}" y1="${H - m.b}" x2="${sx(v)}" y2="${H - m.b + 4}" stroke="#6b7385"/><text x="${sx(v)}" y="${H - m.b + 16}" text-anchor="middle">${Number(v.toFixed(1))}</text>`,
    )
    .join('');
  return `<svg class="logits" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="PBO: the distribution of the logits">
<line x1="${m.l}" y1="${H - m.b}" x2="${W - m.r}" y2="${H - m.b}" stroke="#6b7385"/>
<line x1="${sx(0)}" y1="${m.t}" x2="${sx(0)}" y2="${H - m.b}" stroke="#1d2330" stroke-dasharray="4 3"/>
${bars}${ticks}
<text x="${m.l - 6}" y="${m.t + 10}" text-anchor="end">${top}</text>
<text x="${(m.l + W - m.r) / 2}" y="${H - 6}" text-anchor="middle">λ = logit of the in-sample best's rank out of sample</text>
</svg>`;
}

export const LUCK_STYLE =
  '.luck{border:1px solid #e3e6ee;padding:8px 14px;margin:12px 0}.luck.bad{border-color:#f23645;background:#fff5f5}.luck.good{border-color:#089981;background:#f3fbf8}svg.logits{font-size:11px;fill:#1d2330;max-width:100%;height:auto}';

/** The section, or a line saying why there is none. */
export function luckSection(luck: LuckRecord | null): string {
  if (luck === null) return '<h2>How much of it is luck</h2><p class="note">No best, so nothing to judge.</p>';
  const mood = /more likely luck/.test(luck.verdict) ? ' bad' : /likely skill$/.test(luck.verdict) ? ' good' : '';
  return `<h2>How much of it is luck</h2>
<div class="luck${mood}" id="luck"><strong>${escapeHtml(luck.verdict)}</strong></div>
<ul>
<li>The best's Sharpe ${escapeHtml(luck.bestSharpe)} (from ${luck.returns} returns, skewness ${escapeHtml(luck.skew)}, kurtosis ${escapeHtml(luck.kurtosis)}) against <strong>${escapeHtml(luck.expectedMaxSharpe)}</strong>, the Sharpe the best of ${luck.trials} trials without any skill would be expected to reach with the same spread.</li>
<li>Deflated Sharpe ratio <strong>${escapeHtml(luck.dsr ?? 'n/a')}</strong>: the probability that the best's true Sharpe is above zero, given how many were tried (Bailey and López de Prado, 2014).</li>
<li>Probability of backtest overfitting <strong>${escapeHtml(luck.pbo ?? 'n/a')}</strong>: the returns cut into ${luck.pboBlocks ?? 'n/a'} blocks; over every way to choose half of them, how often the trial best on that half fell to or under the median on the other half (Bailey, Borwein, López de Prado and Zhu, 2015).</li>
</ul>
${logitChart(luck)}
<p class="note">Each split's λ: right of the dashed line (green) the in-sample best stayed above the median out of sample; left (red) it did not. PBO is the red share.</p>`;
}
