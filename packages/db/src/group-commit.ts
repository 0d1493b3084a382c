export interface GroupCommit<In, Out> {
  /** Writes the item, alone or with others that arrive meanwhile; answers its own outcome. */
  write(item: In): Promise<Out>;
}

interface Waiting<In, Out> {
  item: In;
  resolve: (out: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for a hot write path: an item is written at once when fewer than
 * `maxInFlight` batches are being written; otherwise it waits for one to finish and goes
 * with every item that arrived meanwhile, in one `writeBatch` (one statement, one commit).
 * A lone item waits for nobody; under load each commit carries many. Each item keeps its
 * own outcome: should a batch fail (a deadlock with another writer, one item's bad value),
 * its items are written one by one through `writeAlone`, so one item's failure is never
 * another's.
 */
export function createGroupCommit<In, Out>(options: {
  /** Answers one outcome per item, in order. */
  writeBatch: (items: In[]) => Promise<Out[]>;
  writeAlone: (item: In) => Promise<Out>;
  /** After each batch written. */
  written?: () => void;
  maxBatch?: number;
  maxInFlight?: number;
}): GroupCommit<In, Out> {
  const maxBatch = options.maxBatch ?? 200;
  const maxInFlight = options.maxInFlight ?? 2;
  const waiting: Array<Waiting<In, Out>> = [];
  let inFlight = 0;

  async function writeBatch(batch: Array<Waiting<In, Out>>): Promise<void> {
    let results: Out[];
    try {
      results = await options.writeBatch(batch.map((call) => call.item));
    } catch {
      await Promise.all(batch.map((call) => options.writeAlone(call.item).then(call.resolve, call.reject)));
      return;
    }
    options.written?.();
    batch.forEach((call, index) => {
      if (index < results.length) call.resolve(results[index] as Out);
      else call.reject(new Error("a batch answered fewer results than it had items"));
    });
  }

  function pump(): void {
    while (inFlight < maxInFlight && waiting.length > 0) {
      inFlight++;
      void writeBatch(waiting.splice(0, maxBatch)).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    write(item) {
      return new Promise((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        pump();
      });
    },
  };
}
