/**
 * The last test coverage of each flow version (`wfx test --send-coverage`, `wfx dev --test`),
 * kept for the console's flow page to draw on the diagram. A report names the definition its
 * tests ran by hash; it is kept for the version published with that hash, and refused when no
 * version has it (the diagram it would be drawn on does not exist). Kept in memory until the
 * daemon stops: it is made again by running the tests, and it is not the daemon's to keep
 * (docs/decisions/102-coverage-in-memory.md).
 */
import type { CoverageBody, FlowCoverageView } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { coverageItems, coverageKey } from '../../shared/flow/coverage-items.js';
import { ownEntry } from '../../shared/json-object.js';
import type { WfxState } from '../state/state.js';

/** Versions of one flow whose coverage is kept: the ones measured last. */
export const COVERAGE_VERSIONS_KEPT = 20;

export class CoverageBoard {
  /** By processId, then version; each flow's versions in the order they were last measured. */
  private readonly byFlow = new Map<string, Map<string, FlowCoverageView>>();

  /** `store`: whose flows the reports are of (its state read at each call). */
  constructor(private readonly store: { readonly state: WfxState }) {}

  /**
   * Keeps `report` as the coverage of the version of `processId` published with its hash.
   * `organization`: the caller's (null: a system key, any flow). Throws PROCESS_NOT_FOUND for a
   * flow the caller cannot see, VERSION_NOT_FOUND when no version has the hash,
   * VALIDATION_ERROR for a part the version does not have.
   */
  save(organization: string | null, processId: string, report: CoverageBody, now: Date): FlowCoverageView {
    const flow = this.visible(organization, processId);
    const version = Object.values(flow.versions).find((v) => v.hash === report.hash);
    if (version === undefined)
      throw new WfxError(
        'VERSION_NOT_FOUND',
        `no version of flow ${processId} is the definition these tests ran (${report.file}): publish it first`,
      );
    const parts = new Set(coverageItems(version.definition.nodes).map((i) => coverageKey(i.node, i.part)));
    const covered: { node: string; part: string }[] = [];
    const seen = new Set<string>();
    for (const c of report.covered) {
      const key = coverageKey(c.node, c.part);
      if (!parts.has(key))
        throw new WfxError('VALIDATION_ERROR', `version ${version.version} of flow ${processId} has no ${c.part} of ${c.node}`);
      if (seen.has(key)) continue;
      seen.add(key);
      covered.push({ node: c.node, part: c.part });
    }
    const view: FlowCoverageView = {
      processId,
      version: version.version,
      file: report.file,
      measuredAt: now.toISOString(),
      cases: { passed: report.cases.passed, failed: report.cases.failed },
      covered,
    };
    let versions = this.byFlow.get(processId);
    if (versions === undefined) this.byFlow.set(processId, (versions = new Map()));
    versions.delete(view.version); // re-inserted last: the newest measured
    versions.set(view.version, view);
    for (const oldest of versions.keys()) {
      if (versions.size <= COVERAGE_VERSIONS_KEPT) break;
      versions.delete(oldest);
    }
    return view;
  }

  /** The coverage kept for `processId` (of `version` alone, when given), newest measured first. Throws as save does. */
  list(organization: string | null, processId: string, version?: string): FlowCoverageView[] {
    this.visible(organization, processId);
    const kept = [...(this.byFlow.get(processId)?.values() ?? [])].reverse();
    return version === undefined ? kept : kept.filter((c) => c.version === version);
  }

  private visible(organization: string | null, processId: string) {
    const flow = ownEntry(this.store.state.flows, processId);
    if (!flow || (organization !== null && flow.organization !== organization))
      throw new WfxError('PROCESS_NOT_FOUND', `no flow ${processId}`);
    return flow;
  }
}
