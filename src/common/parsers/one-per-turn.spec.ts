import { onePerTurn } from './one-per-turn.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('onePerTurn(): large bodies parsed one per turn of the event loop', () => {
  it('runs queued work later, in order, one piece per turn with a whole turn between two', async () => {
    const order: string[] = [];
    onePerTurn(() => {
      order.push('first');
      // Queued during this turn: runs in the next one, before the second piece.
      setImmediate(() => order.push('the next turn'));
    });
    onePerTurn(() => order.push('second'));
    expect(order).toEqual([]);
    while (order.length < 3) await turn();
    expect(order).toEqual(['first', 'the next turn', 'second']);
  });
});
