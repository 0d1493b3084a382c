import { describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.js";

describe("createGroupCommit", () => {
  it("writes a lone item at once, and items that arrive while a batch is written together in the next", async () => {
    const batches: number[][] = [];
    const commits = createGroupCommit<number, string>({
      writeBatch: async (items) => {
        batches.push(items);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return items.map((item) => `#${item}`);
      },
      writeAlone: async () => {
        throw new Error("not expected");
      },
      maxInFlight: 1,
    });
    const first = commits.write(1);
    const rest = [2, 3, 4].map((item) => commits.write(item));
    expect(await Promise.all([first, ...rest])).toEqual(["#1", "#2", "#3", "#4"]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it("writes a failed batch's items alone, so that one item's failure is only its own", async () => {
    const alone: number[] = [];
    const commits = createGroupCommit<number, number>({
      writeBatch: async (items) => {
        if (items.includes(13)) throw new Error("one bad item");
        return items;
      },
      writeAlone: async (item) => {
        alone.push(item);
        if (item === 13) throw new Error("13 is refused");
        return item;
      },
      maxInFlight: 1,
    });
    const blocker = commits.write(0);
    const outcomes = await Promise.allSettled([12, 13, 14].map((item) => commits.write(item)));
    await blocker;
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(alone.sort()).toEqual([12, 13, 14]);
  });

  it("refuses the items a batch answered no result for", async () => {
    const commits = createGroupCommit<number, number>({
      writeBatch: async (items) => items.slice(1),
      writeAlone: async (item) => item,
    });
    await expect(commits.write(1)).rejects.toThrow(/fewer results/);
  });
});
