import { Module } from '@nestjs/common';
import { ConsoleAssetsController } from './console-assets.controller.js';

/** The web console's built assets at /console (the session and sign-in routes live beside it in the console module). */
@Module({ controllers: [ConsoleAssetsController] })
export class ConsoleAssetsModule {}
