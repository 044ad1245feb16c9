// The Settings screen's delivery section: repository, reviewers, push mode, the provider token (fingerprint only once saved), and remote, base, branch prefix and API URL under Advanced.
import { useState } from "react";
import type { KilnError } from "../../api/backend";
import type { DeliverySettingsView } from "../../api/types";
import type { SettingsForm, TextFieldName } from "../settings/settingsForm";
import { ErrorMessage } from "../../components/ErrorMessage";
import { type SecretInput, SecretField } from "../../components/SecretField";
import { TextField } from "../../components/TextField";

const PUSH_MODES = [
  { id: "auto", label: "auto — push to the repository when the token may, else to your fork" },
  { id: "direct", label: "direct — push to the repository" },
  { id: "fork", label: "fork — push to your fork" },
];

export interface DeliverySettingsFieldsProps {
  view: DeliverySettingsView;
  form: SettingsForm;
  set: (field: TextFieldName) => (value: string) => void;
  token: SecretInput;
  onToken: (input: SecretInput) => void;
  /** The server's refusal of an API URL change (INVALID_INPUT), shown here next to the fields. */
  apiError: KilnError | null;
}

export function DeliverySettingsFields({ view, form, set, token, onToken, apiError }: DeliverySettingsFieldsProps) {
  const apiChanged = form.deliveryApiUrl.trim() !== view.apiUrl.trim();
  const [advanced, setAdvanced] = useState(false);
  const tokenMissing = apiChanged && !token.value.trim();
  return (
    <div data-testid="delivery-settings">
      <h2 className="section-title">Delivery</h2>
      <p className="hint" data-testid="delivery-no-push">
        Where Eject opens pull requests. Saving never pushes anything: nothing leaves this machine until you confirm a
        delivery.
      </p>
      <TextField
        id="delivery-repository"
        label="Repository"
        value={form.deliveryRepository}
        onChange={set("deliveryRepository")}
        placeholder="owner/name"
      />
      <TextField
        id="delivery-reviewers"
        label="Reviewers"
        value={form.deliveryReviewers}
        onChange={set("deliveryReviewers")}
        placeholder="alice, bob"
        hint="Logins asked to review each pull request, separated by commas (CODEOWNERS are added too)."
      />
      <label className="field-label" htmlFor="delivery-push-mode">
        Push mode
      </label>
      <select
        id="delivery-push-mode"
        value={form.deliveryPushMode}
        onChange={(e) => set("deliveryPushMode")(e.target.value)}
        data-testid="delivery-push-mode"
      >
        {!PUSH_MODES.some((m) => m.id === form.deliveryPushMode) && (
          <option value={form.deliveryPushMode}>{form.deliveryPushMode}</option>
        )}
        {PUSH_MODES.map((m) => (
          <option key={m.id} value={m.id}>
            {m.label}
          </option>
        ))}
      </select>
      <SecretField
        id="delivery-token"
        label="Provider token"
        noun="token"
        input={token}
        onChange={onToken}
        fingerprint={view.tokenFingerprint}
        fingerprintTestId="delivery-token-fingerprint"
        clearTestId="clear-delivery-token"
      />
      <details
        className="settings-advanced"
        open={advanced || apiChanged || apiError !== null}
        onToggle={(e) => setAdvanced(e.currentTarget.open)}
      >
        <summary data-testid="delivery-advanced">Advanced</summary>
        <TextField
          id="delivery-remote"
          label="Remote"
          value={form.deliveryRemote}
          onChange={set("deliveryRemote")}
          placeholder="origin"
        />
        <TextField
          id="delivery-base"
          label="Base branch"
          value={form.deliveryBase}
          onChange={set("deliveryBase")}
          placeholder="main"
        />
        <TextField
          id="delivery-branch-prefix"
          label="Branch prefix"
          value={form.deliveryBranchPrefix}
          onChange={set("deliveryBranchPrefix")}
          placeholder="kiln"
        />
        <TextField
          id="delivery-api-url"
          label="API URL"
          value={form.deliveryApiUrl}
          onChange={set("deliveryApiUrl")}
          placeholder="https://api.github.com"
        />
        {tokenMissing && (
          <p className="hint warn-text" data-testid="delivery-token-needed">
            Give the provider token again with the new API URL: a stored token is never sent to another host.
          </p>
        )}
        {apiError && <ErrorMessage error={apiError} subject="API URL" testId="delivery-api-error" />}
      </details>
    </div>
  );
}
