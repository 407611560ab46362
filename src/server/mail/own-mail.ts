/**
 * What this app queued: the messages and jobs a closing app still owes a first attempt, and when
 * the last job it queued becomes due (idle() waits for it).
 */
export class OwnMail {
  private readonly ids = new Set<string>();
  lastJobDue = 0;

  /**
   * `bounded` with the sender loop, which sends them anyway: the last 1000 are enough. Without it
   * (the embedded CLI) the last pass is the only sender, so every one is kept: an import of 5 000
   * users with --invite must send 5 000 invitations.
   */
  constructor(private readonly bounded: boolean) {}

  remember(ids: string[]): void {
    for (const id of ids) this.ids.add(id);
    if (!this.bounded) return;
    while (this.ids.size > 1000) this.ids.delete(this.ids.values().next().value as string);
  }

  /** Tried once: the queue has it now, whatever came of it. */
  forget(id: string): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }

  list(): string[] {
    return [...this.ids];
  }
}
