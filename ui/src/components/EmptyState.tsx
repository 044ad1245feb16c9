// A centred empty-state panel: a title, an explanation and optional actions.
import type { ReactNode } from "react";

export function EmptyState({ title, children, actions }: { title: string; children?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="empty" data-testid="empty">
      <h2 className="empty-title">{title}</h2>
      {children && <div className="empty-body">{children}</div>}
      {actions && <div className="empty-actions">{actions}</div>}
    </div>
  );
}
