// A labelled text input for forms (its id is also its data-testid), with an optional hint below.
export interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  hint?: string;
}

export function TextField({ id, label, value, onChange, placeholder, hint }: TextFieldProps) {
  return (
    <>
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        className="input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={placeholder}
        autoComplete="off"
        spellCheck={false}
        data-testid={id}
      />
      {hint && <p className="hint">{hint}</p>}
    </>
  );
}
