// Placeholder: this page is being built.
export default function Page() {
  return <h1>audit-log</h1>;
}
