// The changed files of a diff, grouped by module (and, in the direct workflow, modules not in the session and the
// repository root): status letter (A/M/D/R), path, a mark on a file with conflicts from an update, and +/− counts; one
// is selected.
import type { DiffGroup, FileDiff, FileStatus } from "../../api/types";
import { type DiffFileRef, OUTSIDE_MODULES_LABEL, pathInModule, STATUS_LETTER } from "../../lib/diff";
import { useModuleWords } from "../../lib/moduleWords";

export function StatusLetter({ status }: { status: FileStatus }) {
  return (
    <span className={`diff-status diff-status-${status}`} title={status} data-testid="diff-status">
      {STATUS_LETTER[status]}
    </span>
  );
}

export function DiffStat({ file }: { file: FileDiff }) {
  return (
    <span className="diff-stat" aria-label={`${file.additions} added, ${file.deletions} removed`}>
      <span className="diff-add" data-testid="diff-additions">
        +{file.additions}
      </span>{" "}
      <span className="diff-del" data-testid="diff-deletions">
        −{file.deletions}
      </span>
    </span>
  );
}

/** The path, or "old → new" for a rename. */
export function DiffFileName({ file, directory }: { file: FileDiff; directory?: string }) {
  const shown = (p: string) => (directory === undefined ? p : pathInModule(p, directory));
  return (
    <span className="diff-path" title={file.oldPath ? `${file.oldPath} → ${file.path}` : file.path}>
      {/* The box runs right to left so a long path loses its start, not its file name; the path itself stays left to right. */}
      <bdi dir="ltr">
        {file.oldPath && file.oldPath !== file.path && (
          <>
            <span className="diff-old-path">{shown(file.oldPath)}</span>
            {" → "}
          </>
        )}
        {shown(file.path)}
      </bdi>
    </span>
  );
}

export interface DiffFileListProps {
  files: DiffFileRef[];
  selected: string | null;
  onSelect: (key: string) => void;
  /** Paths that hold conflict markers from an update: marked in the list. */
  conflicted?: string[];
}

interface Group {
  moduleId: string;
  directory: string;
  group: DiffGroup;
  files: DiffFileRef[];
}

function GroupHead({ g }: { g: Group }) {
  if (g.group === "outside") {
    return (
      <div className="diff-module-head">
        <span className="module-id" data-testid="diff-group-label">
          {OUTSIDE_MODULES_LABEL}
        </span>
      </div>
    );
  }
  return (
    <div className="diff-module-head">
      <code className="module-id" data-testid="diff-group-label">
        {g.moduleId}
      </code>
      <code className="muted small">{g.directory}</code>
      {g.group === "other-module" && (
        <span
          className="badge badge-neutral"
          title="Its files changed; add it to the session so its gates and review run"
        >
          not in the session
        </span>
      )}
    </div>
  );
}

function groups(files: DiffFileRef[]): Group[] {
  const out: Group[] = [];
  for (const f of files) {
    const last = out[out.length - 1];
    if (last && last.moduleId === f.moduleId) last.files.push(f);
    else out.push({ moduleId: f.moduleId, directory: f.directory, group: f.group, files: [f] });
  }
  return out;
}

export function DiffFileList({ files, selected, onSelect, conflicted }: DiffFileListProps) {
  const grouped = groups(files);
  // One package's files need no heading naming it as a module.
  const heads = useModuleWords() || grouped.length > 1 || grouped.some((g) => g.group !== "module");
  return (
    <div className="diff-files" data-testid="diff-files">
      {grouped.map((g) => (
        <div key={g.moduleId} className="diff-module-group" data-module={g.moduleId} data-group={g.group}>
          {heads && <GroupHead g={g} />}
          <ul className="diff-file-list">
            {g.files.map((f) => (
              <li key={f.key}>
                <button
                  type="button"
                  className="diff-file"
                  aria-current={f.key === selected || undefined}
                  onClick={() => onSelect(f.key)}
                  data-testid="diff-file"
                  data-status={f.file.status}
                  data-path={f.file.path}
                >
                  <StatusLetter status={f.file.status} />
                  <DiffFileName file={f.file} directory={g.directory} />
                  {conflicted?.includes(f.file.path) && (
                    <span className="badge badge-warn" data-testid="diff-file-conflict">
                      conflict
                    </span>
                  )}
                  <DiffStat file={f.file} />
                </button>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}
