import { markup, type Html } from '../markup.js';

/**
 * Inline SVG charts for the HTML report and the dashboard: plain SVG (src/markup.ts), no
 * script, no external reference, every label escaped. Each data point is its own element with the
 * class `point` and `data-series`, `data-label`, `data-value` attributes, and a <title> a
 * reader sees on hover, so the chart can be checked (and read aloud) point by point.
 */

export interface ChartSeries {
  name: string;
  /** One value per label, in order. */
  values: readonly number[];
  /** A CSS colour; default: the next of a palette readable by colour-blind readers. */
  color?: string;
}

export interface ChartOptions {
  /** Shown as the chart's accessible name. */
  title: string;
  /** The x axis: one label per point (days, YYYY-MM-DD). */
  labels: readonly string[];
  series: readonly ChartSeries[];
  /** The y axis's title, e.g. "Interactions". */
  yLabel?: string;
  /** The x axis's title, e.g. "Day (UTC)". */
  xLabel?: string;
  /** The values are counts: the axis steps by whole numbers. */
  integer?: boolean;
  /** Writes a value for the axis and the tooltips (default: grouped digits). */
  formatValue?: (value: number) => string;
  width?: number;
  height?: number;
}

/** Okabe-Ito: distinguishable with the common colour-vision deficiencies, and in grey print. */
export const CHART_PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
] as const;

const MARGIN = { top: 12, right: 16, bottom: 52, left: 64 };
const LEGEND_ROW = 22;
const MAX_X_LABELS = 8;

function defaultFormat(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** A rounded axis maximum and step: 1, 2 or 5 times a power of ten, about 4 steps. */
export function niceScale(max: number, integer = false): { max: number; step: number } {
  if (!(max > 0)) return integer ? { max: 1, step: 1 } : { max: 1, step: 0.25 };
  const rough = integer ? Math.max(1, max / 4) : max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  let top = Math.ceil(max / step - 1e-9) * step;
  // Rounding may leave the top a hair under the maximum: one more step covers it.
  if (top < max) top += step;
  return { max: top, step };
}

function round(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

interface Frame {
  width: number;
  height: number;
  plot: { x: number; y: number; width: number; height: number };
  scale: { max: number; step: number };
  format: (value: number) => string;
  colors: string[];
  y: (value: number) => number;
}

function frameOf(options: ChartOptions, maxValue: number): Frame {
  const width = options.width ?? 960;
  const height = options.height ?? 300;
  const legend = options.series.length > 1 ? LEGEND_ROW : 0;
  const plot = {
    x: MARGIN.left,
    y: MARGIN.top + legend,
    width: width - MARGIN.left - MARGIN.right,
    height: height - MARGIN.top - legend - MARGIN.bottom,
  };
  const scale = niceScale(maxValue, options.integer);
  return {
    width,
    height,
    plot,
    scale,
    format: options.formatValue ?? defaultFormat,
    colors: options.series.map((s, i) => s.color ?? CHART_PALETTE[i % CHART_PALETTE.length]!),
    y: (value) => plot.y + plot.height - (Math.max(0, value) / scale.max) * plot.height,
  };
}

function checkLengths(options: ChartOptions): void {
  for (const s of options.series) {
    if (s.values.length !== options.labels.length) {
      throw new Error(
        `chart '${options.title}': series '${s.name}' has ${s.values.length} values for ${options.labels.length} labels`,
      );
    }
  }
}

function open(options: ChartOptions, frame: Frame, kind: string): Html {
  return markup`<svg class="chart chart-${kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${frame.width} ${frame.height}" width="${frame.width}" height="${frame.height}" role="img" aria-label="${options.title}" font-family="system-ui, sans-serif" font-size="11">
<title>${options.title}</title>
`;
}

/** Gridlines, y ticks with labels, the axes and their titles, the x labels, the legend. */
function axes(options: ChartOptions, frame: Frame, xOf: (i: number) => number): Html {
  const { plot, scale } = frame;
  const out: Html[] = [
    markup`<g class="axes" fill="#616e7c">
`,
  ];
  for (let v = 0; v <= scale.max + scale.step / 2; v += scale.step) {
    const y = round(frame.y(v));
    out.push(markup`<line x1="${plot.x}" x2="${plot.x + plot.width}" y1="${y}" y2="${y}" stroke="#e4e7eb"/><text class="y-tick" x="${plot.x - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${frame.format(v)}</text>
`);
  }
  const bottom = plot.y + plot.height;
  out.push(markup`<line x1="${plot.x}" x2="${plot.x + plot.width}" y1="${bottom}" y2="${bottom}" stroke="#9aa5b1"/>
<line x1="${plot.x}" x2="${plot.x}" y1="${plot.y}" y2="${bottom}" stroke="#9aa5b1"/>
`);
  const n = options.labels.length;
  const every = Math.max(1, Math.ceil(n / MAX_X_LABELS));
  for (let i = 0; i < n; i += every) {
    out.push(markup`<text class="x-tick" x="${round(xOf(i))}" y="${bottom + 16}" text-anchor="middle">${options.labels[i]!}</text>
`);
  }
  if (options.xLabel) {
    out.push(markup`<text class="x-label" x="${plot.x + plot.width / 2}" y="${frame.height - 8}" text-anchor="middle" fill="#1f2933">${options.xLabel}</text>
`);
  }
  if (options.yLabel) {
    const cy = plot.y + plot.height / 2;
    out.push(markup`<text class="y-label" x="14" y="${cy}" text-anchor="middle" transform="rotate(-90 14 ${cy})" fill="#1f2933">${options.yLabel}</text>
`);
  }
  if (options.series.length > 1) {
    let x = plot.x;
    options.series.forEach((s, i) => {
      out.push(markup`<g class="legend-item"><rect x="${x}" y="${MARGIN.top}" width="10" height="10" fill="${frame.colors[i]!}"/><text x="${x + 14}" y="${MARGIN.top + 9}" fill="#1f2933">${s.name}</text></g>
`);
      x += 24 + s.name.length * 7;
    });
  }
  return markup`${out}</g>
`;
}

function pointAttributes(series: string, label: string, value: number, frame: Frame): Html {
  return markup`class="point" data-series="${series}" data-label="${label}" data-value="${value}"><title>${`${series}, ${label}: ${frame.format(value)}`}</title>`;
}

/** One line per series, a circle per point. */
export function renderLineChart(options: ChartOptions): Html {
  checkLengths(options);
  const max = Math.max(0, ...options.series.flatMap((s) => s.values));
  const frame = frameOf(options, max);
  const n = options.labels.length;
  const band = frame.plot.width / Math.max(1, n);
  const xOf = (i: number) => frame.plot.x + band * (i + 0.5);
  const out: Html[] = [open(options, frame, 'line'), axes(options, frame, xOf)];
  options.series.forEach((s, si) => {
    const color = frame.colors[si]!;
    const points = s.values.map((v, i) => `${round(xOf(i))},${round(frame.y(v))}`).join(' ');
    out.push(markup`<g class="series" data-series="${s.name}">
`);
    if (n > 1) {
      out.push(markup`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>
`);
    }
    const r = n > 120 ? 1.5 : 3;
    s.values.forEach((v, i) => {
      out.push(markup`<circle cx="${round(xOf(i))}" cy="${round(frame.y(v))}" r="${r}" fill="${color}" ${pointAttributes(s.name, options.labels[i]!, v, frame)}</circle>
`);
    });
    out.push(markup`</g>
`);
  });
  return markup`${out}</svg>
`;
}

/** Bars per label: stacked (the series add up) or one bar per label for a single series. */
export function renderBarChart(options: ChartOptions): Html {
  checkLengths(options);
  const n = options.labels.length;
  const totals = options.labels.map((_, i) =>
    options.series.reduce((sum, s) => sum + Math.max(0, s.values[i]!), 0),
  );
  const frame = frameOf(options, Math.max(0, ...totals));
  const band = frame.plot.width / Math.max(1, n);
  const barWidth = Math.max(1, band * 0.72);
  const xOf = (i: number) => frame.plot.x + band * (i + 0.5);
  const out: Html[] = [open(options, frame, 'bar'), axes(options, frame, xOf)];
  const base = new Array<number>(n).fill(0);
  options.series.forEach((s, si) => {
    const color = frame.colors[si]!;
    out.push(markup`<g class="series" data-series="${s.name}">
`);
    s.values.forEach((v, i) => {
      const bottom = frame.y(base[i]!);
      const top = frame.y(base[i]! + Math.max(0, v));
      base[i]! += Math.max(0, v);
      out.push(markup`<rect x="${round(xOf(i) - barWidth / 2)}" y="${round(top)}" width="${round(barWidth)}" height="${round(bottom - top)}" fill="${color}" ${pointAttributes(s.name, options.labels[i]!, v, frame)}</rect>
`);
    });
    out.push(markup`</g>
`);
  });
  return markup`${out}</svg>
`;
}
