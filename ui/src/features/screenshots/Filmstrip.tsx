// The session's look after each turn, oldest to newest ("Before" first), each opening large; nothing when the preview was never captured.
import type { SessionView } from "../../api/types";
import { shotLabel, turnShots } from "../../lib/screenshots";
import { ScreenshotThumb } from "./ScreenshotThumb";

export function Filmstrip({ session }: { session: SessionView }) {
  const shots = turnShots(session.screenshots);
  if (shots.length === 0) return null;
  return (
    <>
      <h2 className="section-title">Screenshots</h2>
      <ol className="filmstrip" data-testid="filmstrip" aria-label="The preview after each turn">
        {shots.map((shot) => (
          <li key={shot.id}>
            <ScreenshotThumb sessionId={session.id} shot={shot} caption={shotLabel(shot)} />
          </li>
        ))}
      </ol>
    </>
  );
}
