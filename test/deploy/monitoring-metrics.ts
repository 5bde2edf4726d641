/**
 * The metric names the chart's Grafana dashboards and alert rules query, read from the files the
 * chart ships (helm/knowledge-base/dashboards/*.json, rules/kb-alerts.yaml). Shared by the chart
 * test and test/e2e/metrics-names.e2e-spec.ts, which checks each against the services' /metrics.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parse } from 'yaml';

const CHART = join(__dirname, '..', '..', 'helm', 'knowledge-base');
export const DASHBOARDS_DIR = join(CHART, 'dashboards');
export const RULES_FILE = join(CHART, 'rules', 'kb-alerts.yaml');

/** Metrics from outside the services: kube-state-metrics' pod readiness (KbServiceUnready). */
export const EXTERNAL_METRICS = ['kube_pod_status_ready'];
/** Series a Prometheus histogram exposes beside its family name. */
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}
interface Dashboard {
  title: string;
  panels: Panel[];
}
interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}

export const dashboards = (): Dashboard[] =>
  readdirSync(DASHBOARDS_DIR)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as Dashboard);

/** Every PromQL expression: each dashboard panel's targets and each rule, with where it is. */
export const expressions = (): Array<{ where: string; expr: string }> => {
  const found: Array<{ where: string; expr: string }> = [];
  const walk = (dashboard: string, panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        found.push({ where: `${dashboard} / ${panel.title}`, expr: target.expr });
      }
      walk(dashboard, panel.panels ?? []);
    }
  };
  for (const dashboard of dashboards()) walk(dashboard.title, dashboard.panels);
  const rules = parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile;
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      found.push({ where: `rule ${rule.alert ?? rule.record ?? ''}`, expr: rule.expr });
    }
  }
  return found;
};

/**
 * The metric families named in a PromQL expression (a histogram's _bucket/_count/_sum series
 * are its family). The services' metrics are kb_*, and OpenTelemetry's http_* instruments.
 * Label names (in selectors and by/without/on/ignoring clauses) are removed first.
 */
export const metricFamilies = (expr: string): string[] => [
  ...new Set(
    [
      ...expr
        .replace(/\{[^}]*\}/g, '')
        .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
        .matchAll(/\b(?:kb|http|kube)_[a-z0-9_]+\b/g),
    ].map(([name]) => name.replace(HISTOGRAM_SERIES, '')),
  ),
];

/** Each metric family the dashboards and rules query, with the places that query it. */
export const referencedMetrics = (): Map<string, string[]> => {
  const byName = new Map<string, string[]>();
  for (const { where, expr } of expressions()) {
    for (const name of metricFamilies(expr)) byName.set(name, [...(byName.get(name) ?? []), where]);
  }
  return byName;
};
