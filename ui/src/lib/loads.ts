// Loads of a live list that may overlap: a list read from the shell while change events keep
// arriving. Only the latest load counts (an earlier one that finishes later is dropped), and
// the changes that arrived while it was under way are handed back with it, to be applied on
// top, since the list may have been read before or after each of them.

/** What a load that still counts read, and the changes that arrived meanwhile. */
export interface Loaded<T, C> {
  value: T;
  arrived: C[];
}

/** The loads of one list; changes are noted with [`arrive`] as they come. */
export class LatestLoad<C> {
  #latest = 0;
  #arrived: C[] | undefined;

  /** Whether a load is under way. */
  get underWay(): boolean {
    return this.#arrived !== undefined;
  }

  /** Notes a change: the load under way, if any, hands it back with its list. */
  arrive(change: C): void {
    this.#arrived?.push(change);
  }

  /** Runs `read`. Resolves to what it read and the changes that arrived meanwhile, or to
   * `undefined` when a later load started meanwhile (that one's result is what counts, and so
   * is its failure: a superseded load's failure is dropped too). */
  async run<T>(read: () => Promise<T>): Promise<Loaded<T, C> | undefined> {
    const mine = ++this.#latest;
    const arrived: C[] = [];
    this.#arrived = arrived;
    try {
      const value = await read();
      return mine === this.#latest ? { value, arrived } : undefined;
    } catch (error) {
      if (mine === this.#latest) throw error;
      return undefined;
    } finally {
      if (mine === this.#latest) this.#arrived = undefined;
    }
  }
}
