import { IsOptional, IsString, MaxLength } from 'class-validator';

/** Why an operator disabled, retired, suspended or revoked something; recorded in the event. */
export class ReasonDto {
  @IsOptional() @IsString() @MaxLength(500)
  reason?: string;
}
