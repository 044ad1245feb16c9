// A candidate's newest preview screenshot, when one was taken; until then, a note that there is none.
export function CandidateScreenshot({ screenshotId }: { screenshotId: number | null }) {
  if (screenshotId === null) {
    return (
      <div className="candidate-shot candidate-shot-none muted small" data-testid="candidate-screenshot-none">
        No screenshot yet
      </div>
    );
  }
  return (
    <div className="candidate-shot muted small" data-testid="candidate-screenshot" data-screenshot-id={screenshotId}>
      Screenshot {screenshotId}
    </div>
  );
}
